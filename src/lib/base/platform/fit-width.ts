/**
 * Fitting a human table to the screen (SPEC "Commands", Conventions): the
 * width is $COLUMNS, else the terminal's; piped with no $COLUMNS there is no
 * width and nothing is cut (`actors inspect | grep ID` finds whole ids). A
 * table wider than the screen never cuts what a reader types next or reads
 * at a glance (a Run id, a status, a time): its free-text columns (a
 * command, a summary) give way first, cut with `…`; if it is still too wide,
 * whole columns are left out, rightmost first, and the table says which.
 */

const MIN_COLUMN = 4

/** The width human tables must fit: $COLUMNS when it is a positive number, else the terminal's, else none (no cut). */
export function screenWidth(
  env: NodeJS.ProcessEnv = process.env,
  terminal?: {isTTY?: boolean; columns?: number},
): number | undefined {
  const columns = Number(env.COLUMNS)
  if (Number.isInteger(columns) && columns > 0) return columns
  // Read only: the terminal's width when stdout is one (nothing is written here).
  const stream = terminal ?? process.stdout
  if (stream.isTTY && stream.columns && stream.columns > 0) return stream.columns
  return undefined
}

/**
 * How a column gives way to a narrow screen: `key` never (the Run id, the
 * status), `free` text is cut first and left out first, any other column
 * (times, numbers) is shown whole or left out.
 */
export interface ColumnRoles {
  key?: readonly string[]
  free?: readonly string[]
}

export interface FittedColumns {
  /** Each column's width, 0 for one left out. */
  widths: number[]
  /** Headers of the columns left out, in table order. */
  dropped: string[]
}

/**
 * Fit columns of `natural` widths under `headers`, separated by `gap`
 * spaces, into `total` (undefined: no limit). The widest free column is
 * narrowed first, never below its header or MIN_COLUMN (of free columns
 * equally wide, the rightmost); then whole columns are left out, rightmost
 * first, never a key column. Key columns alone may still be wider than the
 * screen: they are never cut, the terminal wraps them.
 */
export function fitColumns(
  headers: readonly string[],
  natural: readonly number[],
  total: number | undefined,
  roles: ColumnRoles = {},
  gap = 2,
): FittedColumns {
  const widths = [...natural]
  if (total === undefined) return {widths, dropped: []}
  const free = headers.map((h) => roles.free?.includes(h) ?? false)
  const key = headers.map((h) => roles.key?.includes(h) ?? false)
  const sum = () => {
    const shown = widths.filter((w) => w > 0)
    return shown.reduce((a, b) => a + b, 0) + gap * Math.max(0, shown.length - 1)
  }
  while (sum() > total) {
    let widest = -1
    for (let i = 0; i < widths.length; i++) {
      const floor = Math.max(headers[i]!.length, MIN_COLUMN)
      if (free[i] && widths[i]! > floor && (widest === -1 || widths[i]! >= widths[widest]!)) widest = i
    }
    if (widest !== -1) {
      widths[widest]!--
      continue
    }
    let last = widths.length - 1
    while (last >= 0 && (widths[last] === 0 || key[last])) last--
    if (last === -1) break
    widths[last] = 0
  }
  return {widths, dropped: headers.filter((_, i) => widths[i] === 0)}
}

/** The line a table ends with when it left columns out ('' when none); `--json` always has every field. */
export function droppedNote(dropped: readonly string[], total: number | undefined): string {
  return dropped.length ? `(left out to fit ${total} columns: ${dropped.join(', ')})` : ''
}

/** `text` in at most `width` characters, its end replaced by `…` when cut. */
export function cutCell(text: string, width: number): string {
  return text.length <= width ? text : `${text.slice(0, Math.max(0, width - 1))}…`
}
