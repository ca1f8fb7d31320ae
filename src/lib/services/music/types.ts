/**
 * The shapes shared by the music modules: players, queue entries, the status
 * object every view and `actors control DIR status` print, and the actions a
 * playback service answers.
 */

export const PLAYER_NAMES = ['mpv', 'ffplay', 'cvlc', 'play', 'afplay', 'wmp'] as const
export type PlayerName = (typeof PLAYER_NAMES)[number]
export type PlayerChoice = PlayerName | 'auto'

export const OUTPUT_MODES = ['default', 'null'] as const
export type OutputMode = (typeof OUTPUT_MODES)[number]

export const PLAYBACK_ACTIONS = [
  'play',
  'pause',
  'toggle',
  'next',
  'previous',
  'seek',
  'volume',
  'stop',
  'status',
] as const
export type PlaybackAction = (typeof PLAYBACK_ACTIONS)[number]

/** Audio extensions a directory walk picks up (explicit files and playlist entries are taken as given). */
export const AUDIO_EXTENSIONS = ['.aac', '.aif', '.aiff', '.flac', '.m4a', '.mp3', '.ogg', '.opus', '.wav'] as const
/** Extensions read as playlists (m3u one entry a line, pls `FileN=` keys). */
export const PLAYLIST_EXTENSIONS = ['.m3u', '.m3u8', '.pls'] as const

/** One playable entry: an absolute file path or a URL. */
export type Track = string

/** `state` values: `unknown` only when nothing was ever recorded. */
export const PLAYBACK_STATES = ['starting', 'playing', 'paused', 'stopped', 'unknown'] as const
export type PlaybackState = (typeof PLAYBACK_STATES)[number]

/** The public status document (SPEC: Music). Field names are the contract. */
export interface PlaybackStatus {
  state: PlaybackState
  /** 0-based position in the queue, null when there is no queue. */
  index: number | null
  count: number
  track: Track | null
  player: PlayerName | null
  volume: number | null
  position_seconds: number | null
  duration_seconds: number | null
  progress_percent: number | null
  position_updated_at_ms: number | null
  updated_at: string | null
  loop?: boolean
  shuffle?: boolean
  /** Why playback stopped (`stopped` by request, `ended` at the end of the queue, `player-exited`...). */
  reason?: string
  /** Present when the answer comes from the checkpoint because no service runs. */
  service?: 'running' | 'not running'
}

/** A reply on either endpoint: one JSON line, at most 4 KiB. */
export type PlaybackReply =
  | ({ok: true; action: PlaybackAction} & {status: PlaybackStatus})
  | {ok: false; error: string; code?: string; exit_code?: number}
