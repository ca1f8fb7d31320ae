/**
 * The plain-text face of the Run views: the table `actors inspect` prints,
 * and the change detection of `inspect --watch` without a TTY, which shows
 * the table (or tree) again each time a Run appears, disappears or changes
 * status (./inspect.ts: plain text, or one NDJSON snapshot per change).
 */
import {
  LAYOUT_ROLES,
  layoutHeaders,
  rowCells,
  type Clock,
  type Layout,
  type RunRow,
} from '../../services/view-state/run-rows.js'
import {
  rowsKey,
  type StateSnapshot,
  type StateStore,
  type WatchedListing,
} from '../../services/view-state/runs-store.js'
import {screenWidth} from '../../base/platform/fit-width.js'
import {formatTable} from '../../base/platform/text.js'

/**
 * The widest a free-text cell (a command, a Recipe) is printed with no screen width (piped): one Run's huge
 * argv must not pad every row of a scripted listing; `inspect --json` keeps it whole.
 */
const PIPED_CELL_MAX = 200

/** The plain table of `rows` ('' when there are none), fitted to `width` (default: the screen's; piped: free-text cells cut). */
export function formatRunTable(
  rows: RunRow[],
  layout: Layout,
  clock: Clock,
  width: number | undefined = screenWidth(),
): string {
  const headers = layoutHeaders(layout, rows)
  const where = headers.includes('WHERE')
  return rows.length
    ? formatTable(
        headers,
        rows.map((row) => rowCells(row, layout, clock, where)),
        width,
        LAYOUT_ROLES[layout],
        width === undefined ? PIPED_CELL_MAX : undefined,
      ) + '\n'
    : ''
}

export interface WatchChangesOptions<T extends WatchedListing> {
  /** Rows of a read: what is compared to decide that something changed. */
  toRows: (data: T) => RunRow[]
  /** Show a read that differs from the last one shown (`first`: the first read). */
  show: (snapshot: StateSnapshot<T>, first: boolean) => void
  /** Ends the watch (SIGINT, SIGTERM, or a test). */
  signal: AbortSignal
}

/** Show the store's Runs now and after every change until `signal` aborts. */
export function watchRunChanges<T extends WatchedListing>(
  store: StateStore<T>,
  options: WatchChangesOptions<T>,
): Promise<void> {
  let lastKey: string | undefined
  const print = () => {
    const snapshot = store.snapshot()
    const rows = options.toRows(snapshot.data)
    const key = rowsKey(rows, snapshot.data.damaged.length)
    if (key === lastKey) return
    const first = lastKey === undefined
    lastKey = key
    options.show(snapshot, first)
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
