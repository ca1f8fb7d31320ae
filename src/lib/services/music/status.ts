/**
 * The status document and its projection to "now": while playing, the
 * position advances with the clock from the last time the player reported
 * it; while paused or stopped it is frozen. Views, `status` replies and the
 * checkpoint all go through here so they never disagree.
 */
import type {PlaybackStatus} from './types.js'

/** A status for when nothing was ever recorded (SPEC: `state: "unknown"`). */
export function unknownStatus(): PlaybackStatus {
  return {
    state: 'unknown',
    index: null,
    count: 0,
    track: null,
    player: null,
    volume: null,
    position_seconds: null,
    duration_seconds: null,
    progress_percent: null,
    position_updated_at_ms: null,
    updated_at: null,
  }
}

const round = (n: number, digits: number) => Math.round(n * 10 ** digits) / 10 ** digits

/** `status` as of `nowMs`: the position advances only while playing, never past the duration. */
export function projectStatus(status: PlaybackStatus, nowMs = Date.now()): PlaybackStatus {
  let position = status.position_seconds
  if (status.state === 'playing' && position !== null && status.position_updated_at_ms !== null) {
    position += Math.max(0, nowMs - status.position_updated_at_ms) / 1000
  }
  const duration = status.duration_seconds
  if (position !== null && duration !== null && duration > 0) position = Math.min(position, duration)
  const progress = position !== null && duration !== null && duration > 0 ? round((position / duration) * 100, 1) : null
  return {
    ...status,
    position_seconds: position === null ? null : round(position, 3),
    progress_percent: progress,
    position_updated_at_ms: status.state === 'playing' && position !== null ? nowMs : status.position_updated_at_ms,
  }
}

/** `m:ss` for a number of seconds (views and plain lines). */
export function formatClock(seconds: number | null): string {
  if (seconds === null || !Number.isFinite(seconds)) return '-:--'
  const s = Math.max(0, Math.floor(seconds))
  const h = Math.floor(s / 3600)
  const m = Math.floor((s % 3600) / 60)
  const ss = String(s % 60).padStart(2, '0')
  return h > 0 ? `${h}:${String(m).padStart(2, '0')}:${ss}` : `${m}:${ss}`
}
