/** One summary line: how many Runs per status, coloured like the rows. */
import {Text} from 'ink'
import {statusStyle} from '../lib/services/view-state/run-rows.js'

export function StatusCounts({counts}: {counts: Array<[string, number]>}) {
  if (!counts.length) return <Text dimColor>no Runs yet</Text>
  return (
    <Text>
      {counts.map(([status, n], i) => (
        <Text key={status}>
          {i ? <Text dimColor> · </Text> : null}
          <Text color={statusStyle(status).color}>
            {n} {status}
          </Text>
        </Text>
      ))}
    </Text>
  )
}
