/**
 * The command lines of the players driven by process control (one process
 * per track): where to start, how loud, and how to reach no audio device.
 * Pure functions, so the argv each player gets is testable on machines where
 * the player cannot run silently (sox `play`).
 */
import type {OutputMode, PlayerName, Track} from './types.js'

export interface TrackCommand {
  command: string
  args: string[]
  env: NodeJS.ProcessEnv
}

export interface TrackCommandOptions {
  executable: string
  track: Track
  startSeconds: number
  /** 0-100 */
  volume: number
  output: OutputMode
}

/** Players whose command line can start a track at an offset (seek by restart). */
export const CAN_START_AT_OFFSET: Record<Exclude<PlayerName, 'mpv'>, boolean> = {
  ffplay: true,
  cvlc: true,
  play: true,
  afplay: false,
  wmp: true,
}

const seconds = (s: number) => String(Math.max(0, Math.round(s * 1000) / 1000))
const factor = (volume: number) => String(Math.round((volume / 100) * 100) / 100)

/** Quote a value as a PowerShell single-quoted string literal. */
function psQuote(value: string): string {
  return `'${value.replaceAll("'", "''")}'`
}

/** The command that plays `track` once with the given start and volume. */
export function buildTrackCommand(player: Exclude<PlayerName, 'mpv'>, o: TrackCommandOptions): TrackCommand {
  const start = o.startSeconds > 0
  switch (player) {
    case 'ffplay':
      return {
        command: o.executable,
        args: [
          '-nodisp',
          '-autoexit',
          '-loglevel',
          'error',
          '-volume',
          String(o.volume),
          ...(start ? ['-ss', seconds(o.startSeconds)] : []),
          '-i',
          o.track,
        ],
        env: o.output === 'null' ? {SDL_AUDIODRIVER: 'dummy'} : {},
      }
    case 'cvlc':
      return {
        command: o.executable,
        args: [
          '--intf',
          'dummy',
          '--play-and-exit',
          '--no-video',
          '--quiet',
          `--gain=${factor(o.volume)}`,
          ...(start ? [`--start-time=${seconds(o.startSeconds)}`] : []),
          ...(o.output === 'null' ? ['--aout=dummy'] : []),
          '--',
          o.track,
        ],
        env: {},
      }
    case 'play':
      // sox: `-v` is an input-file option (before the file), `trim START` an effect (after it).
      return {
        command: o.executable,
        args: ['-q', '-v', factor(o.volume), o.track, ...(start ? ['trim', seconds(o.startSeconds)] : [])],
        env: {},
      }
    case 'afplay':
      return {command: o.executable, args: ['-v', factor(o.volume), o.track], env: {}}
    case 'wmp': {
      // Windows Media Player's COM object, driven from PowerShell until the track ends.
      const script = [
        '$p = New-Object -ComObject WMPlayer.OCX',
        `$p.settings.volume = ${Math.round(o.volume)}`,
        `$p.URL = ${psQuote(o.track)}`,
        ...(start ? [`$p.controls.currentPosition = ${seconds(o.startSeconds)}`] : []),
        '$p.controls.play()',
        'Start-Sleep -Milliseconds 300',
        'while ($p.playState -ne 1 -and $p.playState -ne 8 -and $p.playState -ne 10) { Start-Sleep -Milliseconds 200 }',
      ].join('; ')
      return {command: o.executable, args: ['-NoProfile', '-NonInteractive', '-Command', script], env: {}}
    }
  }
}
