/**
 * The now-playing view's logic (`music play` on a TTY): which key asks the
 * playback service for what, and how a status looks on screen. Keys become
 * the same requests `actors control DIR ACTION` sends (the service's
 * handleRequest), so there is one control path.
 */
import {basename} from 'node:path'
import type {PlaybackStatus} from '../music/types.js'
import {formatClock} from '../music/status.js'
import {inertText} from '../../base/platform/text.js'

export const SEEK_STEP_SECONDS = 5
export const VOLUME_STEP = 5

export interface KeyPress {
  leftArrow?: boolean
  rightArrow?: boolean
  escape?: boolean
}

export interface PlaybackCommand {
  action: 'toggle' | 'next' | 'previous' | 'seek' | 'volume' | 'stop'
  value?: string | number
}

/**
 * The request for a key, or undefined for keys that do nothing. Seeking
 * ∓5 s becomes `seek PERCENT` of the current track (the control surface
 * seeks by percent); without a known duration it is ignored.
 */
export function keyToCommand(input: string, key: KeyPress, status: PlaybackStatus): PlaybackCommand | undefined {
  if (input === ' ') return {action: 'toggle'}
  if (input === 'n') return {action: 'next'}
  if (input === 'p') return {action: 'previous'}
  if (input === '+' || input === '=') return {action: 'volume', value: `+${VOLUME_STEP}`}
  if (input === '-' || input === '_') return {action: 'volume', value: `-${VOLUME_STEP}`}
  if (input === 'q' || key.escape) return {action: 'stop'}
  if (key.leftArrow || key.rightArrow) {
    const {position_seconds: position, duration_seconds: duration} = status
    if (position === null || duration === null || !(duration > 0)) return undefined
    const target = Math.min(duration, Math.max(0, position + (key.rightArrow ? SEEK_STEP_SECONDS : -SEEK_STEP_SECONDS)))
    return {action: 'seek', value: Math.round((target / duration) * 1000) / 10}
  }
  return undefined
}

/** A bar of `width` cells, `fraction` of them filled. */
export function progressBar(fraction: number | null, width: number): string {
  const cells = Math.max(1, width)
  const filled =
    fraction === null || !Number.isFinite(fraction) ? 0 : Math.round(Math.min(1, Math.max(0, fraction)) * cells)
  return '━'.repeat(filled) + '─'.repeat(cells - filled)
}

export interface NowPlayingModel {
  state: string
  title: string
  /** The full track (path or URL) under the title. */
  source: string
  position: string
  /** `3/12`, or '' with no queue. */
  place: string
  bar: string
  time: string
  volume: string
  player: string
}

/** What the view shows for `status` (already projected to now) in a `width`-column terminal. */
export function nowPlayingModel(status: PlaybackStatus, width: number): NowPlayingModel {
  const track = status.track ?? ''
  const title = track ? decodeURIComponent(basename(track.replace(/[?#].*$/, ''))) || track : '(nothing)'
  const fraction = status.progress_percent === null ? null : status.progress_percent / 100
  const time = `${formatClock(status.position_seconds)} / ${formatClock(status.duration_seconds)}`
  // A track name is the queue's own text (a file name, a URL whose %1b decodes to ESC): inert on screen.
  return {
    state: status.state,
    title: inertText(title),
    source: inertText(track),
    position: status.progress_percent === null ? '' : `${Math.round(status.progress_percent)}%`,
    place: status.index === null ? '' : `${status.index + 1}/${status.count}`,
    bar: progressBar(fraction, Math.max(10, Math.min(60, width - time.length - 8))),
    time,
    volume: status.volume === null ? 'vol -' : `vol ${status.volume}%`,
    player: status.player ?? '',
  }
}
