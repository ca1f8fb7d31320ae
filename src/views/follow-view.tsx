/**
 * `run --follow` / `logs --follow` on a TTY: every output line once, into
 * scrollback (<Static>), stderr marked with a red bar; below it one live line
 * with the Run's status and running time, gone when the Run ends.
 */
import {Box, Static, Text} from 'ink'
import {elapsed, statusStyle} from '../lib/services/view-state/run-rows.js'
import type {FollowLine, FollowSnapshot} from '../lib/services/view-state/follow-store.js'

export function OutputLine({line}: {line: FollowLine}) {
  if (line.stream === 'stderr') {
    return (
      <Text>
        <Text color="red">┃ </Text>
        <Text dimColor>{line.text}</Text>
      </Text>
    )
  }
  return <Text>{line.text}</Text>
}

export function FollowView({snapshot}: {snapshot: FollowSnapshot}) {
  const style = statusStyle(snapshot.status)
  return (
    <>
      <Static items={snapshot.lines}>{(line) => <OutputLine key={line.id} line={line} />}</Static>
      {snapshot.ended ? null : (
        <Box>
          <Text color={style.color}>{style.glyph} </Text>
          <Text bold>{snapshot.run}</Text>
          <Text color={style.color}> {snapshot.status}</Text>
          <Text> {elapsed(snapshot.started_at, snapshot.now)}</Text>
          <Text dimColor>{'   Ctrl-C stops following (the Run keeps going)'}</Text>
        </Box>
      )}
    </>
  )
}
