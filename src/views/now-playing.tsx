/** The now-playing panel of `music play` on a TTY: track, place, progress, volume, state, keys. */
import {Box, Text} from 'ink'
import type {NowPlayingModel} from '../lib/services/view-state/now-playing.js'
import {inertText} from '../lib/base/platform/text.js'

const STATE_COLOR: Record<string, string> = {playing: 'green', paused: 'yellow', stopped: 'gray', starting: 'cyan'}
const STATE_GLYPH: Record<string, string> = {playing: '▶', paused: '‖', stopped: '■', starting: '…'}

export function NowPlaying({model, message}: {model: NowPlayingModel; message?: string}) {
  const color = STATE_COLOR[model.state] ?? 'gray'
  return (
    <Box flexDirection="column" borderStyle="round" borderColor={color} paddingX={1}>
      <Text wrap="truncate">
        <Text color={color}>
          {STATE_GLYPH[model.state] ?? '·'} {model.state}
        </Text>
        {'  '}
        <Text bold>{model.title}</Text>
        {model.place ? <Text dimColor>{`  ${model.place}`}</Text> : null}
      </Text>
      <Text dimColor wrap="truncate-start">
        {model.source}
      </Text>
      <Text>
        <Text color={color}>{model.bar}</Text> {model.time}
      </Text>
      <Text dimColor>
        {model.volume}
        {model.player ? ` · ${model.player}` : ''}
        {'   space pause/play · n/p next/prev · ←/→ seek 5s · +/- volume · q quit'}
      </Text>
      {message ? <Text color="red">{inertText(message)}</Text> : null}
    </Box>
  )
}
