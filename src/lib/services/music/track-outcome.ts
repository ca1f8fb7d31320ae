/**
 * Whether a player process that ended had played its track. Exit codes are
 * not enough: ffplay exits 0 after failing to open a file or the audio
 * device, so its own error lines (kept from its stderr) are read too. A
 * track that failed is skipped with the player's reason; a queue in which
 * nothing played is a failure, not "ended" (service.ts).
 */
import type {PlayerName, Track} from './types.js'

export interface PlayerExit {
  player: Exclude<PlayerName, 'mpv'>
  track: Track
  code: number | null
  signal: NodeJS.Signals | null
  /** The end of what the player wrote on stderr. */
  stderr: string
}

/** The player's last meaningful stderr line (ALSA's configuration chatter skipped), shortened. */
export function lastErrorLine(stderr: string): string | undefined {
  const lines = stderr
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line && !line.startsWith('ALSA lib '))
  const last = lines.at(-1)
  return last === undefined ? undefined : last.length > 200 ? `${last.slice(0, 197)}...` : last
}

/** ffplay's fatal open errors: `FILE: <reason>` and "Failed to open file ... or configure filtergraph". */
function ffplayOpenError(exit: PlayerExit): string | undefined {
  const lines = exit.stderr.split(/\r?\n/).map((line) => line.trim())
  return lines.find((line) => line.startsWith(`${exit.track}: `) || line.startsWith('Failed to open file '))
}

/**
 * Why the track did not play, or undefined when it played. Callers only ask
 * about exits they did not cause (a kill for next, seek or stop is ignored before).
 */
export function trackFailure(exit: PlayerExit): string | undefined {
  const said = lastErrorLine(exit.stderr)
  if (exit.signal) return `killed by ${exit.signal}`
  if (exit.code !== 0) return `exit code ${exit.code}${said ? `: ${said}` : ''}`
  if (exit.player === 'ffplay') {
    const error = ffplayOpenError(exit)
    if (error) return `exit code 0: ${error}`
  }
  return undefined
}
