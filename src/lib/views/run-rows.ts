/**
 * What a Run looks like on screen, decided once for every view: the glyph and
 * colour of each status, the duration shown (ticking for live Runs), and the
 * rows of a table or tree with how many did not fit.
 */
import {formatDuration} from '../duration.js'
import type {ColorName} from '../output.js'
import type {RunSummary} from '../run-summary.js'
import {isTerminal} from '../run-types.js'

export interface StatusStyle {
  glyph: string
  color: ColorName
}

const STYLES: Record<string, StatusStyle> = {
  queued: {glyph: '○', color: 'gray'},
  running: {glyph: '●', color: 'cyan'},
  paused: {glyph: '‖', color: 'yellow'},
  done: {glyph: '✔', color: 'green'},
  failed: {glyph: '✖', color: 'red'},
  cancelled: {glyph: '⊘', color: 'yellow'},
  killed: {glyph: '✖', color: 'magenta'},
  exited: {glyph: '?', color: 'red'},
}

/** Glyph and colour for a status (unknown statuses get a neutral look). */
export function statusStyle(status: string): StatusStyle {
  return STYLES[status] ?? {glyph: '·', color: 'gray'}
}

/** The duration to show at `now`: live Runs tick from their start, finished ones keep their recorded length. */
export function displayDuration(run: Pick<RunSummary, 'status' | 'started_at' | 'duration_ms'>, now: number): string {
  if (!isTerminal(run.status) && run.started_at) return formatDuration(Math.max(0, now - Date.parse(run.started_at)))
  return formatDuration(run.duration_ms ?? undefined)
}

/** `2025-01-02T03:04:05.678Z` → `2025-01-02 03:04:05` (UTC, as stored). */
export function displayTime(iso: string | null): string {
  return iso ? iso.replace('T', ' ').slice(0, 19) : '-'
}

/** One line of a Run table or tree: the Run, and the tree prefix drawn before its id ('' in a table). */
export interface RunRow {
  run: RunSummary
  prefix: string
}

/** Rows of a flat table, in listing order. */
export function tableRows(runs: RunSummary[]): RunRow[] {
  return runs.map((run) => ({run, prefix: ''}))
}

export interface FittedRows {
  rows: RunRow[]
  /** Runs left off because the screen is too short. */
  hidden: number
}

/**
 * Keep at most `limit` rows. In a table, finished Runs leave first (oldest
 * first) so live ones stay in view; a tree keeps its order and loses its tail.
 */
export function fitRows(rows: RunRow[], limit: number, mode: 'table' | 'tree'): FittedRows {
  const max = Math.max(1, limit)
  if (rows.length <= max) return {rows, hidden: 0}
  if (mode === 'tree') return {rows: rows.slice(0, max), hidden: rows.length - max}
  let excess = rows.length - max
  const drop = new Set<RunRow>()
  for (const row of rows) {
    if (excess === 0) break
    if (isTerminal(row.run.status)) {
      drop.add(row)
      excess--
    }
  }
  const kept = rows.filter((row) => !drop.has(row))
  // Still too many live Runs: show the newest.
  const shown = kept.slice(kept.length - max)
  return {rows: shown, hidden: rows.length - shown.length}
}

/** Counts of Runs by status, in the order statuses are listed (for summaries). */
export function countByStatus(runs: Array<{status: string}>): Array<[string, number]> {
  const counts = new Map<string, number>()
  for (const run of runs) counts.set(run.status, (counts.get(run.status) ?? 0) + 1)
  const order = Object.keys(STYLES)
  return [...counts].sort((a, b) => (order.indexOf(a[0]) + 1 || 99) - (order.indexOf(b[0]) + 1 || 99))
}
