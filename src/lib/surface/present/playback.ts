/**
 * The faces of playback (`music play`, `music serve`): on a TTY (`play`
 * only) the now-playing view mounted on the service, its keys sending the
 * service's own requests; otherwise the plain renderer (one line on stdout
 * per track change, warnings and the final state on stderr), which only
 * reads the store and never drives playback; under --json nothing until the
 * final document.
 */
import {importView} from '../../base/platform/esm-import.js'
import type {PlaybackRunResult, RunPlaybackOptions} from '../../services/music/runner.js'
import type {PlaybackService} from '../../services/music/service.js'
import {formatClock} from '../../services/music/status.js'
import {documentResult, liveResult, type LiveResult, type TextSinks} from './result.js'
import {writeNote, writeOut} from './write.js'
import {inertText} from '../../base/platform/text.js'

/** A track line: `3/12 /music/album/03 song.flac`; one inert line whatever the track is named. */
export function formatTrackLine(index: number, count: number, track: string): string {
  return inertText(`${index + 1}/${count} ${track}`)
}

/** Subscribe plain lines to `service`; returns the unsubscribe function. */
export function renderPlainLines(
  service: PlaybackService,
  to: Pick<TextSinks, 'out' | 'note'> = {out: writeOut, note: writeNote},
): () => void {
  return service.subscribe((status, event) => {
    if (event.type === 'track') to.out(formatTrackLine(event.index, status.count, event.track) + '\n')
    else if (event.type === 'warning') to.note(`actors: ${inertText(event.message)}\n`)
    else if (event.type === 'stop')
      to.note(
        `actors: playback ${event.reason === 'ended' ? 'ended' : `stopped (${event.reason})`} at ${formatClock(status.position_seconds)}\n`,
      )
  })
}

/** Start playback with `start(onService)` (it resolves when playback ends) and show it; `ink: false` for `music serve`, whose log stays plain. */
export function showPlayback(
  start: (onService: RunPlaybackOptions['onService']) => Promise<PlaybackRunResult>,
  options: {ink: boolean},
): LiveResult {
  return liveResult({
    json: async () => documentResult(await start(() => {})),
    plain: async () => documentResult(await start((service) => renderPlainLines(service))),
    ink: options.ink
      ? async () => {
          const view = await importView<typeof import('../../../views/now-playing-live.js')>('now-playing-live')
          let nowPlaying: {close(): Promise<void>} | undefined
          try {
            return documentResult(await start((service) => (nowPlaying = view.mountNowPlaying(service))))
          } finally {
            await nowPlaying?.close()
          }
        }
      : undefined,
  })
}
