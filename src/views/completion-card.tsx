/** The completion card of `actors wait` on a TTY: counts, one row per member (indented forest), notes, the hint. */
import {Box, Text} from 'ink'
import type {CardModel} from '../lib/services/view-state/card-model.js'
import {printableLine} from '../lib/base/platform/text.js'
import {statusStyle} from '../lib/services/view-state/run-rows.js'
import {StatusCounts} from './status-counts.js'

/** Under a coordinator's row: the Runs its own waits collected (reported to it), status and first output line. */
function CollectedRuns({level, note}: {level: number; note: NonNullable<CardModel['rows'][number]['collected']>}) {
  const indent = '  '.repeat(level + 2)
  const width = Math.min(40, Math.max(0, ...note.runs.map((r) => r.run.length)))
  return (
    <Box flexDirection="column">
      <Text dimColor wrap="truncate">{`${indent}${note.header}`}</Text>
      {note.runs.map((r) => {
        const style = statusStyle(r.status)
        return (
          <Text key={r.run} wrap="truncate">
            {`${indent}↳ ${r.run.padEnd(width)}  `}
            <Text color={style.color}>{r.status.padEnd(9)}</Text>
            <Text dimColor>{` ${printableLine(r.summary, 1000)}`}</Text>
          </Text>
        )
      })}
      {note.more > 0 ? <Text dimColor>{`${indent}… ${note.more} more`}</Text> : null}
    </Box>
  )
}

export function CompletionCard({card}: {card: CardModel}) {
  const width = Math.min(40, Math.max(0, ...card.rows.map((r) => r.run.length + r.level * 2)))
  return (
    <Box flexDirection="column" borderStyle="round" borderColor="gray" paddingX={1}>
      <Text bold>{card.title}</Text>
      {card.counts.length ? <StatusCounts counts={card.counts} /> : null}
      {card.rows.map((row) => {
        const style = statusStyle(row.status)
        return (
          <Box key={row.key} flexDirection="column">
            <Text wrap="truncate">
              <Text color={style.color}>{style.glyph} </Text>
              {`${'  '.repeat(row.level)}${row.run}`.padEnd(width)}
              {'  '}
              <Text color={style.color}>{row.status.padEnd(9)}</Text>
              {row.duration.padStart(7)}
              {'  '}
              <Text dimColor>{row.summary}</Text>
            </Text>
            {row.artifacts.length ? (
              <Text dimColor wrap="truncate">{`${'  '.repeat(row.level + 2)}↳ ${row.artifacts.join(', ')}`}</Text>
            ) : null}
            {row.collected ? <CollectedRuns level={row.level} note={row.collected} /> : null}
          </Box>
        )
      })}
      {card.notes.map((note) => (
        <Text key={note} color="yellow" wrap="truncate">
          {note}
        </Text>
      ))}
      <Text dimColor>more: {card.hint}</Text>
    </Box>
  )
}
