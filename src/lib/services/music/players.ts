/**
 * Which audio player to use: `auto` picks the first installed one in the
 * platform's order, a named one must be installed. Failures are exit 127 and
 * name every executable that was looked for, so the fix is obvious.
 */
import {accessSync, constants, statSync} from 'node:fs'
import {delimiter, join} from 'node:path'
import {ActorsError, EXIT, usageError} from '../../base/platform/errors.js'
import {PLAYER_NAMES, type OutputMode, type PlayerChoice, type PlayerName} from './types.js'

/** The `auto` order per platform (SPEC: Music). */
export const AUTO_ORDER: Record<string, PlayerName[]> = {
  linux: ['mpv', 'ffplay', 'cvlc', 'play'],
  darwin: ['mpv', 'afplay', 'ffplay', 'cvlc', 'play'],
  win32: ['wmp', 'mpv', 'ffplay', 'cvlc'],
}

/** The executable each player runs (wmp is driven through PowerShell). */
export const PLAYER_EXECUTABLE: Record<PlayerName, string> = {
  mpv: 'mpv',
  ffplay: 'ffplay',
  cvlc: 'cvlc',
  play: 'play',
  afplay: 'afplay',
  wmp: 'powershell',
}

/** Players that can play in real time to no audio device (`--output null`). */
export const NULL_OUTPUT_PLAYERS: readonly PlayerName[] = ['mpv', 'ffplay', 'cvlc']

export const INSTALL_HINT = 'install mpv (Debian/Ubuntu: apt install mpv; macOS: brew install mpv) or ffmpeg for ffplay'

/** The first executable called `name` on PATH (PATHEXT on Windows), or undefined. */
export function findExecutable(
  name: string,
  env: NodeJS.ProcessEnv = process.env,
  platform = process.platform,
): string | undefined {
  const dirs = (env.PATH ?? env.Path ?? '').split(delimiter).filter(Boolean)
  const exts = platform === 'win32' ? (env.PATHEXT ?? '.EXE;.CMD;.BAT;.COM').split(';').filter(Boolean) : ['']
  for (const dir of dirs) {
    for (const ext of exts) {
      const candidate = join(dir, name + ext)
      try {
        if (!statSync(candidate).isFile()) continue
        if (platform !== 'win32') accessSync(candidate, constants.X_OK)
        return candidate
      } catch {}
    }
  }
  return undefined
}

export interface ResolvedPlayer {
  name: PlayerName
  /** Absolute path of the executable. */
  executable: string
  /** Every player looked at, in order (for messages). */
  tried: PlayerName[]
}

/** Parse a `--player` value, refusing unknown names with the list (exit 2). */
export function parsePlayerChoice(value: string | undefined): PlayerChoice {
  const v = (value ?? 'auto').trim()
  if (v === 'auto' || (PLAYER_NAMES as readonly string[]).includes(v)) return v as PlayerChoice
  throw usageError(`player ${JSON.stringify(v)} is not known`, `use one of: auto, ${PLAYER_NAMES.join(', ')}`)
}

/**
 * Resolve `choice` to an installed player. With `output: null` only players
 * that can play to no device qualify: `auto` skips the others, a named one is
 * refused (exit 2) rather than making sound on a machine that asked for none.
 */
export function resolvePlayer(
  choice: PlayerChoice,
  output: OutputMode,
  env: NodeJS.ProcessEnv = process.env,
  platform = process.platform,
): ResolvedPlayer {
  if (choice !== 'auto') {
    if (output === 'null' && !NULL_OUTPUT_PLAYERS.includes(choice)) {
      throw usageError(
        `player ${choice} cannot play to no audio device (--output null)`,
        `use one of ${NULL_OUTPUT_PLAYERS.join(', ')}, or --output default`,
      )
    }
    const executable = findExecutable(PLAYER_EXECUTABLE[choice], env, platform)
    if (!executable) {
      throw new ActorsError(
        `player ${choice} is not installed (tried: ${PLAYER_EXECUTABLE[choice]} on PATH)`,
        EXIT.notInstalled,
        `${INSTALL_HINT}, or pick another with --player (auto tries ${(AUTO_ORDER[platform] ?? AUTO_ORDER.linux).join(', ')})`,
        {tried: [choice]},
      )
    }
    return {name: choice, executable, tried: [choice]}
  }
  const order = (AUTO_ORDER[platform] ?? AUTO_ORDER.linux).filter(
    (p) => output !== 'null' || NULL_OUTPUT_PLAYERS.includes(p),
  )
  const tried: PlayerName[] = []
  for (const name of order) {
    tried.push(name)
    const executable = findExecutable(PLAYER_EXECUTABLE[name], env, platform)
    if (executable) return {name, executable, tried}
  }
  throw new ActorsError(
    `no audio player installed${output === 'null' ? ' that can play to no device' : ''} (tried: ${tried.join(', ')} on PATH)`,
    EXIT.notInstalled,
    INSTALL_HINT,
    {tried},
  )
}
