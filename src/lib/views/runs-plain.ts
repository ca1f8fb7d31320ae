/**
 * The plain-text face of the Run views: the table `actors inspect` prints,
 * and `inspect --watch` without a TTY, which prints the table (or tree) again
 * each time a Run appears, disappears or changes status (separated by an
 * empty line), or one NDJSON snapshot per change under `--json`.
 */
import {formatTable} from '../output.js'
import {layoutHeaders, rowCells, type Clock, type Layout, type RunRow} from './run-rows.js'
import {rowsKey, type StateStore} from './runs-store.js'

/** The plain table of `rows` ('' when there are none). */
export function formatRunTable(rows: RunRow[], layout: Layout, clock: Clock): string {
  const headers = layoutHeaders(layout, rows)
  const where = headers.includes('WHERE')
  return rows.length ? formatTable(headers, rows.map((row) => rowCells(row, layout, clock, where))) + '\n' : ''
}

/** What a watched read looks like to the renderers: its rows and its damaged dirs. */
export interface WatchedListing {
  damaged: unknown[]
}

export interface PlainWatchOptions<T extends WatchedListing> {
  json: boolean
  /** Rows of a read: what is compared to decide that something changed. */
  toRows: (data: T) => RunRow[]
  /** The plain text of a read (the same as the command prints without --watch). */
  format: (data: T, clock: Clock) => string
  write: (text: string) => void
  /** Ends the watch (SIGINT, SIGTERM, or a test). */
  signal: AbortSignal
}

/** Print the store's Runs now and after every change until `signal` aborts. */
export function watchRunsPlain<T extends WatchedListing>(store: StateStore<T>, options: PlainWatchOptions<T>): Promise<void> {
  let lastKey: string | undefined
  const print = () => {
    const snapshot = store.snapshot()
    const rows = options.toRows(snapshot.data)
    const key = rowsKey(rows, snapshot.data.damaged.length)
    if (key === lastKey) return
    const first = lastKey === undefined
    lastKey = key
    if (options.json) {
      options.write(JSON.stringify({type: 'snapshot', at: new Date(snapshot.readAt).toISOString(), ...snapshot.data}) + '\n')
      return
    }
    const text = options.format(snapshot.data, snapshot)
    options.write((first ? '' : '\n') + (text || '(no Runs)\n'))
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
