/** Plain text helpers shared by the plain formatters and the Ink views: aligned tables and one safe line of Run-written text. */
import {cutCell, fittedWidths} from './fit-width.js'

/** Width of each column so `rows` of cells line up under `headers` (the plain table and the Ink one alike). */
export function columnWidths(headers: string[], rows: string[][]): number[] {
  return headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)))
}

/** Render rows as aligned columns (plain text); `maxWidth`: cut the widest columns' cells with `…` until every line fits. */
export function formatTable(headers: string[], rows: string[][], maxWidth?: number): string {
  const natural = columnWidths(headers, rows)
  const widths =
    maxWidth === undefined
      ? natural
      : fittedWidths(
          natural,
          headers.map((h) => h.length),
          maxWidth,
        )
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? cutCell(c, widths[i]) : cutCell(c, widths[i]).padEnd(widths[i])))
      .join('  ')
      .trimEnd()
  return [line(headers), ...rows.map(line)].join('\n')
}

/**
 * Text a Run wrote (a Trace summary) as one printable line: control characters
 * (escape sequences, bells, line breaks) become spaces so a Run can neither
 * drive the reader's terminal nor fake extra lines; long text is cut with "…".
 */
export function printableLine(text: string, max = 200): string {
  const flat = text.replace(/[\s\u0000-\u001f\u007f-\u009f]+/g, ' ').trim()
  return flat.length > max ? flat.slice(0, max - 1) + '…' : flat
}
