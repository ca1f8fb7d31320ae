/** The Run table (or tree) drawn by `inspect --watch`: rows in, nothing decided here. */
import {Box, Text} from 'ink'
import {layoutHeaders, rowCells, statusStyle, type Clock, type Layout, type RunRow} from '../lib/view-state/run-rows.js'
import {cutCell, fittedWidths, screenWidth} from '../lib/platform/fit-width.js'
import {columnWidths} from '../lib/platform/text.js'

export interface RunTableProps {
  rows: RunRow[]
  layout: Layout
  clock: Clock
}

export function RunTable({rows, layout, clock}: RunTableProps) {
  const headers = layoutHeaders(layout, rows)
  const cells = rows.map((row) => rowCells(row, layout, clock, headers.includes('WHERE')))
  // Fit the terminal as the plain table does (the widest column gives way, cut with …), less the status glyph.
  const widths = fittedWidths(
    columnWidths(headers, cells),
    headers.map((h) => h.length),
    screenWidth() - 2,
  )
  const pad = (text: string, i: number) => {
    const cut = cutCell(text, widths[i]!)
    return i === widths.length - 1 ? cut : cut.padEnd(widths[i]! + 2)
  }
  const statusColumn = headers.indexOf('STATUS')
  return (
    <Box flexDirection="column">
      <Text bold>{'  ' + headers.map(pad).join('')}</Text>
      {rows.map((row, index) => {
        const style = statusStyle(row.status)
        return (
          <Text key={row.key} wrap="truncate">
            <Text color={style.color}>{style.glyph} </Text>
            {cells[index]!.map((cell, i) =>
              i === statusColumn ? (
                // biome-ignore lint/suspicious/noArrayIndexKey: a row's cells are its columns, in a fixed order
                <Text key={i} color={style.color}>
                  {pad(cell, i)}
                </Text>
              ) : (
                // biome-ignore lint/suspicious/noArrayIndexKey: a row's cells are its columns, in a fixed order
                <Text key={i} dimColor={i > 0 && headers[i] !== 'DURATION'}>
                  {pad(cell, i)}
                </Text>
              ),
            )}
          </Text>
        )
      })}
    </Box>
  )
}
