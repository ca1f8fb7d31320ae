/**
 * What a Run looks like on screen, decided once for every view: the glyph and
 * colour of each status, the duration shown (ticking for live Runs), the rows
 * of a table (from the `inspect` listing) or of a tree (from the `inspect
 * --tree` forest), and which rows fit on the screen.
 */
import {formatDuration} from '../../base/platform/duration.js'
import type {RunListing} from '../../kernel/history/inspect.js'
import type {Forest, TreeNode} from '../../kernel/history/forest.js'
import {formatTreeUsage} from '../../kernel/runs/usage-rollup.js'
import {isTerminal} from '../../base/records/run.js'
import {displayStatus, type RunResources} from '../../kernel/runs/summary.js'
import {compactTime, resourceCells} from './resource-cells.js'
import {displayRunName} from '../../base/records/generation-layout.js'
import {describeWhere, THIS_MACHINE} from '../../kernel/executors/index.js'
import {inertText} from '../../base/platform/text.js'
import type {ColumnRoles} from '../../base/platform/fit-width.js'

/** Ink colour names the status styles use. */
type ColorName = 'gray' | 'cyan' | 'yellow' | 'green' | 'red' | 'magenta'

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

/** A clock for durations: `readAt` is when the durations were measured, `now` is the time to show. */
export interface Clock {
  now: number
  readAt: number
}

/**
 * The duration to show: a live Run's measured duration grows with the clock
 * (so a view can tick without re-reading); a finished Run keeps its own.
 */
export function displayDuration(run: {status: string; duration_ms: number | null}, clock: Clock): string {
  if (run.duration_ms === null) return '-'
  // Paused time counts too, as in summarizeRun: the next re-read agrees with the tick.
  const live = !isTerminal(run.status)
  return formatDuration(run.duration_ms + (live ? Math.max(0, clock.now - clock.readAt) : 0))
}

/** One line of a Run table or tree, whichever listing it came from. */
export interface RunRow {
  key: string
  /** Tree branches drawn before the id ('' in a table). */
  prefix: string
  run: string
  recipe: string | null
  status: string
  started_at: string | null
  duration_ms: number | null
  parent: string | null
  /** Tokens reported ('' when none); on a tree's top line, the tree's total. */
  usage: string
  /** Locks a queued Run waits for ([locks]). */
  waiting_for?: string[]
  /** Where it runs, for a remote Run (`slurm 12@node1`); '' for a local one. */
  where?: string
  /** Table rows: the exit code, the command line and CPU/memory (absent or null: '-'). */
  exit_code?: number | null
  command?: string
  resources?: RunResources | null
}

export type Layout = 'table' | 'tree'

export const LAYOUT_HEADERS: Record<Layout, string[]> = {
  table: ['RUN', 'RECIPE', 'STATUS', 'EXIT', 'STARTED', 'DURATION', 'CPU', 'MEM', 'COMMAND', 'PARENT'],
  tree: ['RUN', 'STATUS', 'DURATION', 'USAGE', 'RECIPE'],
}

/** How each layout's columns give way to a narrow screen (platform/fit-width.ts): ids and statuses never. */
export const LAYOUT_ROLES: Record<Layout, ColumnRoles> = {
  table: {key: ['RUN', 'STATUS'], free: ['RECIPE', 'COMMAND']},
  tree: {key: ['RUN', 'STATUS'], free: ['RECIPE']},
}

/** The headers for these rows: a table gains a WHERE column when any Run runs elsewhere (SPEC: Executors). */
export function layoutHeaders(layout: Layout, rows: RunRow[]): string[] {
  return layout === 'table' && rows.some((row) => row.where)
    ? [...LAYOUT_HEADERS.table, 'WHERE']
    : LAYOUT_HEADERS[layout]
}

/** The cells of a row under the layout's headers (the plain table and the Ink table alike); `where`: with the WHERE column. */
export function rowCells(row: RunRow, layout: Layout, clock: Clock, where = false): string[] {
  // Inert before the views measure them (a Run writes its own name, Recipe and command into run.json).
  return rawCells(row, layout, clock, where).map((cell) => inertText(cell))
}

function rawCells(row: RunRow, layout: Layout, clock: Clock, where: boolean): string[] {
  const duration = displayDuration(row, clock)
  if (layout === 'tree')
    return [row.prefix + row.run, displayStatus(row), duration, row.usage || '-', row.recipe ?? '-']
  const cells = [
    row.prefix + row.run,
    row.recipe ?? '-',
    displayStatus(row),
    row.exit_code == null ? '-' : String(row.exit_code),
    compactTime(row.started_at, clock.now),
    duration,
    ...resourceCells(row.resources),
    row.command || '-',
    row.parent ?? '-',
  ]
  return where ? [...cells, row.where || THIS_MACHINE] : cells
}

/** Rows of the `inspect` table, in listing order. */
export function tableRows(listing: Pick<RunListing, 'runs'>): RunRow[] {
  return listing.runs.map((r) => ({
    key: r.state_dir,
    prefix: '',
    run: displayRunName(r.run, r.generation),
    recipe: r.recipe,
    status: r.status,
    started_at: r.started_at,
    duration_ms: r.duration_ms,
    parent: r.parent,
    usage: '',
    ...(r.waiting_for ? {waiting_for: r.waiting_for} : {}),
    where: describeWhere(r),
    exit_code: r.exit_code,
    command: r.command,
    resources: r.resources,
  }))
}

/** Rows of the `inspect --tree` forest, in preorder, with box-drawing branches. */
export function treeRows(forest: Pick<Forest, 'forest'>): RunRow[] {
  const rows: RunRow[] = []
  const walk = (node: TreeNode, parent: string | null, lead: string, childLead: string, top: boolean) => {
    const usage =
      top && node.tree_usage && node.children.length > 0
        ? `tree ${formatTreeUsage(node.tree_usage)}`
        : node.usage === null
          ? ''
          : `${node.usage} tokens`
    rows.push({
      key: node.state_dir,
      prefix: lead,
      run: displayRunName(node.run, node.generation),
      recipe: node.recipe,
      status: node.status,
      started_at: null,
      duration_ms: node.duration_ms,
      parent,
      usage,
      ...(node.waiting_for ? {waiting_for: node.waiting_for} : {}),
    })
    node.children.forEach((child, index) => {
      const last = index === node.children.length - 1
      walk(child, node.run, `${childLead}${last ? '└─ ' : '├─ '}`, `${childLead}${last ? '   ' : '│  '}`, false)
    })
  }
  for (const top of forest.forest) walk(top, null, '', '', true)
  return rows
}

export interface FittedRows {
  rows: RunRow[]
  /** Runs left off because the screen is too short. */
  hidden: number
}

/**
 * Keep at most `limit` rows. Finished Runs leave first, oldest first, so
 * live ones stay in view: in a table one row at a time, in a tree whole
 * finished trees (a tree with a live Run stays whole); what is left that
 * still does not fit loses its tail.
 */
export function fitRows(rows: RunRow[], limit: number, layout: Layout): FittedRows {
  const max = Math.max(1, limit)
  if (rows.length <= max) return {rows, hidden: 0}
  if (layout === 'tree') {
    let excess = rows.length - max
    const kept = treesOf(rows).flatMap((tree) => {
      if (excess <= 0 || !tree.every((row) => isTerminal(row.status))) return tree
      excess -= tree.length
      return []
    })
    const shown = kept.slice(0, max)
    return {rows: shown, hidden: rows.length - shown.length}
  }
  let excess = rows.length - max
  const drop = new Set<RunRow>()
  for (const row of rows) {
    if (excess === 0) break
    if (isTerminal(row.status)) {
      drop.add(row)
      excess--
    }
  }
  const kept = rows.filter((row) => !drop.has(row))
  // Still too many live Runs: show the newest.
  const shown = kept.slice(kept.length - max)
  return {rows: shown, hidden: rows.length - shown.length}
}

/** Tree rows (preorder, see treeRows) cut into their trees: a row without branches starts one. */
function treesOf(rows: RunRow[]): RunRow[][] {
  const trees: RunRow[][] = []
  for (const row of rows) {
    if (row.prefix === '' || trees.length === 0) trees.push([row])
    else trees[trees.length - 1]!.push(row)
  }
  return trees
}

/** Counts of Runs by status, in the order statuses are listed (for summaries). */
export function countByStatus(runs: Array<{status: string}>): Array<[string, number]> {
  const counts = new Map<string, number>()
  for (const run of runs) counts.set(run.status, (counts.get(run.status) ?? 0) + 1)
  const order = Object.keys(STYLES)
  return [...counts].sort((a, b) => (order.indexOf(a[0]) + 1 || 99) - (order.indexOf(b[0]) + 1 || 99))
}

/** Time since `startedAt` at `now`, formatted ('-' before the start). */
export function elapsed(startedAt: string | null, now: number): string {
  return startedAt ? formatDuration(Math.max(0, now - Date.parse(startedAt))) : '-'
}
