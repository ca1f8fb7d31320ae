/**
 * The plain renderer of a playback service (no TTY, CI, or `music serve`'s
 * log): one line on stdout per track change, warnings and the final state on
 * stderr. It only reads the store; it never drives playback.
 */
import {formatClock} from './status.js'
import type {PlaybackService} from './service.js'

/** A track line: `3/12 /music/album/03 song.flac`. */
export function formatTrackLine(index: number, count: number, track: string): string {
  return `${index + 1}/${count} ${track}`
}

/** Subscribe plain lines to `service`; returns the unsubscribe function. */
export function renderPlainLines(service: PlaybackService, out: NodeJS.WritableStream = process.stdout, err: NodeJS.WritableStream = process.stderr): () => void {
  return service.subscribe((status, event) => {
    if (event.type === 'track') out.write(formatTrackLine(event.index, status.count, event.track) + '\n')
    else if (event.type === 'warning') err.write(`actors: ${event.message}\n`)
    else if (event.type === 'stop') err.write(`actors: playback ${event.reason === 'ended' ? 'ended' : `stopped (${event.reason})`} at ${formatClock(status.position_seconds)}\n`)
  })
}
