/** One attention event as it happened (`actors emit --attention`): drawn once, into scrollback. */
import {Text} from 'ink'
import {attentionText, type AttentionNote} from '../lib/services/view-state/attention-feed.js'

export function AttentionLine({note}: {note: AttentionNote}) {
  return (
    <Text wrap="truncate">
      <Text color="yellow">! </Text>
      <Text dimColor>{note.ts.slice(11, 19)} </Text>
      {attentionText(note)}
    </Text>
  )
}
