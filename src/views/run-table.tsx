/** The Run table (or tree) drawn by `inspect --watch`: rows in, nothing decided here. */
import {Box, Text} from 'ink'
import type {RunRow} from '../lib/views/run-rows.js'
import {statusStyle} from '../lib/views/run-rows.js'
import {TABLE_HEADERS, columnWidths, runCells} from '../lib/views/runs-plain.js'

export interface RunTableProps {
  rows: RunRow[]
  now: number
}

export function RunTable({rows, now}: RunTableProps) {
  const cells = rows.map((row) => runCells(row, now))
  const widths = columnWidths(TABLE_HEADERS, cells)
  const pad = (text: string, i: number) => (i === widths.length - 1 ? text : text.padEnd(widths[i]! + 2))
  return (
    <Box flexDirection="column">
      <Text bold>{'  ' + TABLE_HEADERS.map(pad).join('')}</Text>
      {rows.map((row, index) => {
        const style = statusStyle(row.run.status)
        const [id, recipe, status, started, duration, parent] = cells[index]!.map(pad)
        return (
          <Text key={row.run.state_dir} wrap="truncate">
            <Text color={style.color}>{style.glyph} </Text>
            {id}
            <Text dimColor>{recipe}</Text>
            <Text color={style.color}>{status}</Text>
            <Text dimColor>{started}</Text>
            {duration}
            <Text dimColor>{parent}</Text>
          </Text>
        )
      })}
    </Box>
  )
}
