/**
 * The plain-text face of the Runs store: the table `actors inspect` prints,
 * and `inspect --watch` without a TTY, which prints that table again each
 * time the set of Runs or a status changes (separated by an empty line), or
 * one NDJSON snapshot per change under `--json`.
 */
import {formatTable} from '../output.js'
import type {RunListing} from '../inspect.js'
import {displayDuration, displayTime, type RunRow} from './run-rows.js'
import {snapshotKey, type RunsStore} from './runs-store.js'

export const TABLE_HEADERS = ['RUN', 'RECIPE', 'STATUS', 'STARTED', 'DURATION', 'PARENT']

/** The cells of one Run row, shared by the plain table and the Ink table. */
export function runCells(row: RunRow, now: number): string[] {
  const r = row.run
  return [row.prefix + r.run, r.recipe ?? '-', r.status, displayTime(r.started_at), displayDuration(r, now), r.parent ?? '-']
}

/** The plain table of `rows` ('' when there are none). */
export function formatRunTable(rows: RunRow[], now: number): string {
  return rows.length ? formatTable(TABLE_HEADERS, rows.map((row) => runCells(row, now))) + '\n' : ''
}

export interface PlainWatchOptions {
  json: boolean
  /** Turn a listing into rows (table or tree). */
  toRows: (listing: RunListing) => RunRow[]
  write: (text: string) => void
  /** Ends the watch (SIGINT, SIGTERM, or a test). */
  signal: AbortSignal
}

/** Print the store's Runs now and after every change until `signal` aborts. */
export function watchRunsPlain(store: RunsStore, options: PlainWatchOptions): Promise<void> {
  let lastKey: string | undefined
  const print = () => {
    const snapshot = store.snapshot()
    const key = snapshotKey(snapshot)
    if (key === lastKey) return
    const first = lastKey === undefined
    lastKey = key
    if (options.json) {
      options.write(JSON.stringify({type: 'snapshot', at: new Date(snapshot.now).toISOString(), runs: snapshot.runs, damaged: snapshot.damaged}) + '\n')
      return
    }
    const table = formatRunTable(options.toRows(snapshot), snapshot.now)
    options.write((first ? '' : '\n') + (table || '(no Runs)\n'))
  }
  return new Promise((resolve) => {
    const unsubscribe = store.subscribe(print)
    print()
    const stop = () => {
      unsubscribe()
      resolve()
    }
    if (options.signal.aborted) stop()
    else options.signal.addEventListener('abort', stop, {once: true})
  })
}

/** Width of each column so `rows` of cells line up under `headers`. */
export function columnWidths(headers: string[], rows: string[][]): number[] {
  return headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)))
}
