/**
 * Playback requests as they arrive from any endpoint: one action name and an
 * optional text value. Checked the same way on the client (so bad input is a
 * usage error, exit 2, before anything is sent) and in the service.
 */
import {InputProblem, usageError} from '../../base/platform/errors.js'
import {PLAYBACK_ACTIONS, type PlaybackAction} from './types.js'

export type PlaybackRequest =
  | {action: 'play' | 'pause' | 'toggle' | 'next' | 'previous' | 'stop' | 'status'}
  | {action: 'seek'; percent: number}
  | {action: 'volume'; volume: number; relative: boolean}

/** Names that mean another action: `resume` is `play` (SPEC: Music), for a standalone service and a Run alike. */
export const PLAYBACK_ALIASES: Readonly<Record<string, PlaybackAction>> = {resume: 'play'}

/** Parse an action and its value; throws InputProblem naming the bad part. */
export function parsePlaybackRequest(action: string, value?: string | number | null): PlaybackRequest {
  const raw = value === undefined || value === null ? '' : String(value).trim()
  const named = Object.hasOwn(PLAYBACK_ALIASES, action) ? PLAYBACK_ALIASES[action] : action
  if (!(PLAYBACK_ACTIONS as readonly string[]).includes(named)) {
    throw new InputProblem(
      `unknown playback action ${JSON.stringify(action)}`,
      `use one of: ${[...PLAYBACK_ACTIONS, ...Object.keys(PLAYBACK_ALIASES)].join(', ')}`,
    )
  }
  const a = named as PlaybackAction
  if (a === 'seek') {
    const n = Number(raw.replace(/%$/, ''))
    if (raw === '' || !Number.isFinite(n) || n < 0 || n > 100) {
      throw new InputProblem(
        `seek needs a percent from 0 to 100, got ${JSON.stringify(raw)}`,
        'e.g. `seek 50` jumps to the middle of the track',
      )
    }
    return {action: 'seek', percent: n}
  }
  if (a === 'volume') {
    const m = /^([+-]?)(\d{1,3})%?$/.exec(raw)
    const n = m ? Number(m[2]) : NaN
    if (!m || (m[1] === '' && n > 100)) {
      throw new InputProblem(
        `volume needs a percent from 0 to 100 (or +N/-N), got ${JSON.stringify(raw)}`,
        'e.g. `volume 30`, `volume +5`',
      )
    }
    return {action: 'volume', volume: m[1] === '-' ? -n : n, relative: m[1] !== ''}
  }
  if (raw !== '') throw new InputProblem(`${a} takes no value, got ${JSON.stringify(raw)}`, `run it as just \`${a}\``)
  return {action: a}
}

/** A service's refusal of a request it could not parse: exit 2 for whoever sent it, as the client's own check. */
export function requestProblemReply(
  error: unknown,
): {ok: false; error: string; code: string; exit_code: 2} | undefined {
  if (!(error instanceof InputProblem)) return undefined
  return {ok: false, error: `${error.message} (${error.fix})`, code: 'bad-request', exit_code: 2}
}

/** The same check for command-line callers: a usage error (exit 2). */
export function parsePlaybackRequestOrUsage(action: string, value?: string | number | null): PlaybackRequest {
  try {
    return parsePlaybackRequest(action, value)
  } catch (error) {
    if (error instanceof InputProblem) throw usageError(error.message, error.fix)
    throw error
  }
}
