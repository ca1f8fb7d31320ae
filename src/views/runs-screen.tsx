/** The whole `inspect --watch` screen: title, the fitted rows, what is off-screen, the keys. */
import {Box, Text} from 'ink'
import type {Clock, Layout, RunRow} from '../lib/services/view-state/run-rows.js'
import {RunTable} from './run-table.js'
import {StatusCounts} from './status-counts.js'

export interface RunsScreenProps {
  title: string
  rows: RunRow[]
  hidden: number
  layout: Layout
  counts: Array<[string, number]>
  clock: Clock
  damaged: number
}

export function RunsScreen({title, rows, hidden, layout, counts, clock, damaged}: RunsScreenProps) {
  return (
    <Box flexDirection="column">
      <Text bold>{title}</Text>
      {rows.length ? <RunTable rows={rows} layout={layout} clock={clock} /> : null}
      {hidden ? (
        <Text dimColor>
          … {hidden} more {hidden === 1 ? 'Run' : 'Runs'} off-screen
        </Text>
      ) : null}
      {damaged ? (
        <Text color="red">
          {damaged} unreadable Run {damaged === 1 ? 'dir' : 'dirs'} skipped (see `actors inspect`)
        </Text>
      ) : null}
      <Box>
        <StatusCounts counts={counts} />
        <Text dimColor>{'   q quit'}</Text>
      </Box>
    </Box>
  )
}
