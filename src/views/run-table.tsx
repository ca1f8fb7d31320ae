/** The Run table (or tree) drawn by `inspect --watch`: rows in, nothing decided here. */
import {Box, Text} from 'ink'
import {
  LAYOUT_ROLES,
  layoutHeaders,
  rowCells,
  statusStyle,
  type Clock,
  type Layout,
  type RunRow,
} from '../lib/services/view-state/run-rows.js'
import {cutCell, droppedNote, fitColumns, screenWidth} from '../lib/base/platform/fit-width.js'
import {columnWidths} from '../lib/base/platform/text.js'

export interface RunTableProps {
  rows: RunRow[]
  layout: Layout
  clock: Clock
}

export function RunTable({rows, layout, clock}: RunTableProps) {
  const headers = layoutHeaders(layout, rows)
  const cells = rows.map((row) => rowCells(row, layout, clock, headers.includes('WHERE')))
  // Fit the terminal as the plain table does (ids and statuses whole, free text cut first), less the status glyph.
  const width = (screenWidth() ?? 80) - 2
  const {widths, dropped} = fitColumns(headers, columnWidths(headers, cells), width, LAYOUT_ROLES[layout])
  const shown = widths.flatMap((w, i) => (w > 0 ? [i] : []))
  const pad = (text: string, i: number) => {
    const cut = cutCell(text, widths[i]!)
    return i === shown[shown.length - 1] ? cut : cut.padEnd(widths[i]! + 2)
  }
  const statusColumn = headers.indexOf('STATUS')
  const note = droppedNote(dropped, width)
  return (
    <Box flexDirection="column">
      <Text bold>{'  ' + shown.map((i) => pad(headers[i]!, i)).join('')}</Text>
      {rows.map((row, index) => {
        const style = statusStyle(row.status)
        return (
          <Text key={row.key} wrap="truncate">
            <Text color={style.color}>{style.glyph} </Text>
            {shown.map((i) =>
              i === statusColumn ? (
                <Text key={headers[i]} color={style.color}>
                  {pad(cells[index]![i]!, i)}
                </Text>
              ) : (
                <Text key={headers[i]} dimColor={i > 0 && headers[i] !== 'DURATION'}>
                  {pad(cells[index]![i]!, i)}
                </Text>
              ),
            )}
          </Text>
        )
      })}
      {note ? <Text dimColor>{note}</Text> : null}
    </Box>
  )
}
