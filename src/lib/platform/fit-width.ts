/**
 * Fitting a human table to the screen (SPEC "Commands", Conventions): the
 * width is $COLUMNS, else the terminal's, else 80; while a table is wider,
 * its widest column gives up one character at a time, its cells cut with `…`.
 */

const MIN_COLUMN = 4

/** The width human tables must fit: $COLUMNS when it is a positive number, else the terminal's, else 80. */
export function screenWidth(
  env: NodeJS.ProcessEnv = process.env,
  terminal?: {isTTY?: boolean; columns?: number},
): number {
  const columns = Number(env.COLUMNS)
  if (Number.isInteger(columns) && columns > 0) return columns
  // Read only: the terminal's width when stdout is one (nothing is written here).
  const stream = terminal ?? process.stdout
  if (stream.isTTY && stream.columns && stream.columns > 0) return stream.columns
  return 80
}

/**
 * Column widths for `widths` (each column's natural width) separated by `gap`
 * spaces that fit in `total`: the widest column is narrowed first, never
 * below its header or MIN_COLUMN; a table that cannot fit keeps those floors.
 * Of columns equally wide the rightmost gives way first: the first columns
 * hold what a reader types next (a Run id), the last ones commands and text.
 */
export function fittedWidths(widths: number[], floors: number[], total: number, gap = 2): number[] {
  const fitted = [...widths]
  const sum = () => fitted.reduce((a, b) => a + b, 0) + gap * Math.max(0, fitted.length - 1)
  while (sum() > total) {
    let widest = -1
    for (let i = 0; i < fitted.length; i++) {
      if (fitted[i] > Math.max(floors[i], MIN_COLUMN) && (widest === -1 || fitted[i] >= fitted[widest])) widest = i
    }
    if (widest === -1) break
    fitted[widest]--
  }
  return fitted
}

/** `text` in at most `width` characters, its end replaced by `…` when cut. */
export function cutCell(text: string, width: number): string {
  return text.length <= width ? text : `${text.slice(0, Math.max(0, width - 1))}…`
}
