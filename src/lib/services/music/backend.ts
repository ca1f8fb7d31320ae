/**
 * The contract between the playback service and a player backend, and the
 * one way player processes are started and ended: in their own process group
 * (so a terminal's Ctrl-C reaches the service, which stops the player in
 * order), always killed as a whole group, continued first if stopped.
 */
import type {ChildProcess} from 'node:child_process'
import {readFileSync, readlinkSync, realpathSync} from 'node:fs'
import {basename} from 'node:path'
import {execaLibrary} from '../../base/platform/execa.js'
import {readProcessIdentity, type ProcessIdentity, isSameProcess} from '../../base/platform/process-identity.js'
import {PLAYER_EXECUTABLE} from './players.js'
import type {PlayerName, Track} from './types.js'

/** What the backend tells the service. */
export interface BackendEvents {
  /** A track (0-based queue index) started; `durationSeconds` when known. */
  onTrack(index: number): void
  /** The queue ran out (no loop). */
  onEnded(): void
  /** The player went away on its own or failed for good. */
  onFailed(reason: string): void
  /** Something worth a warning that does not stop playback. */
  onWarning(message: string): void
  /** A track could not be played and was skipped (the message says why). */
  onTrackFailed(message: string): void
  /** A track played to its end: the queue played something (an ended queue of failures is a failure). */
  onPlayed(index: number): void
}

export interface StartAt {
  index: number
  positionSeconds: number
  paused: boolean
  volume: number
}

/** Truth about playback as the player (or the backend's clock) knows it. */
export interface BackendProbe {
  index?: number
  positionSeconds?: number
  durationSeconds?: number
  paused?: boolean
}

/** A running player. Every method changes the playing track in place where the player allows it. */
export interface PlayerBackend {
  readonly name: PlayerName
  start(at: StartAt): Promise<void>
  /** Play queue entry `index` from its start, keeping the paused intent. */
  jump(index: number): Promise<void>
  setPaused(paused: boolean): Promise<void>
  /** Seek to `percent` (0-100) of the current track; throws with a reason when impossible. */
  seekPercent(percent: number): Promise<void>
  setVolume(volume: number): Promise<void>
  probe(): Promise<BackendProbe>
  /** End the player; resolves once its process is gone. Idempotent. */
  stop(): Promise<void>
  /** The live player process, for the checkpoint (reaping an orphan after a crash). */
  playerProcess(): ProcessIdentity | undefined
}

export interface BackendOptions {
  tracks: Track[]
  loop: boolean
  output: 'default' | 'null'
  executable: string
  /** Directory for sockets and generated playlists (the state dir, or a temp dir). */
  workDir: string
  events: BackendEvents
}

export interface SpawnedPlayer {
  child: ChildProcess
  pid: number
  identity?: ProcessIdentity
  /** Resolves with the exit code (or null) and signal once the process is gone. */
  exited: Promise<{code: number | null; signal: NodeJS.Signals | null}>
  /** The last lines the player wrote on stderr (bounded), when its stderr is kept. */
  stderrTail(): string
}

/** At most this much of a player's stderr is kept (its last words name why a track failed). */
const STDERR_TAIL_BYTES = 4096

/**
 * Start a player in its own process group with no stdin and discarded output.
 * `controlPipe` adds a socketpair as fd 3 (mpv's `--input-ipc-client=fd://3`):
 * the player quits when it closes, which the kernel does even if we are SIGKILLed.
 */
export function spawnPlayer(
  command: string,
  args: string[],
  env: NodeJS.ProcessEnv = {},
  controlPipe = false,
  keepStderr = false,
): SpawnedPlayer {
  const stderr = keepStderr ? 'pipe' : 'ignore'
  const child = execaLibrary().execa(command, args, {
    detached: true,
    stdio: controlPipe ? ['ignore', 'ignore', stderr, 'pipe'] : ['ignore', 'ignore', stderr],
    env: {...process.env, ...env},
    extendEnv: false,
    // Its stderr is read below and fd 3 is the player's, both as they come; its end is the 'exit' below, not a rejection;
    // killPlayer decides when it gets SIGKILL.
    buffer: false,
    reject: false,
    cleanup: false,
    forceKillAfterDelay: false,
  })
  let tail = ''
  child.stderr?.setEncoding('utf8')
  child.stderr?.on('data', (chunk: string) => (tail = (tail + chunk).slice(-STDERR_TAIL_BYTES)))
  child.stderr?.on('error', () => {})
  const exited = new Promise<{code: number | null; signal: NodeJS.Signals | null}>((resolve) => {
    child.once('exit', (code, signal) => {
      // Its last words may still be in the pipe: read them first (never longer than a moment).
      if (!child.stderr || child.stderr.readableEnded) resolve({code, signal})
      else {
        const done = () => resolve({code, signal})
        child.stderr.once('end', done)
        setTimeout(done, 200).unref()
      }
    })
    // A player that never started (not found, not executable) has no pid, and no 'exit'.
    void child.then(() => {
      if (child.pid === undefined) resolve({code: 127, signal: null})
    })
  })
  // A detached child must not keep the service alive by itself, but we do wait for it explicitly.
  const pid = child.pid ?? -1
  return {child, pid, identity: pid > 0 ? readProcessIdentity(pid) : undefined, exited, stderrTail: () => tail}
}

/** Signal a player's whole process group (falling back to the pid), ignoring a group that is gone. */
export function signalPlayer(pid: number, signal: NodeJS.Signals): void {
  if (pid <= 0) return
  try {
    process.kill(process.platform === 'win32' ? pid : -pid, signal)
  } catch {
    try {
      process.kill(pid, signal)
    } catch {}
  }
}

/** End a spawned player: SIGTERM (and SIGCONT, in case it is stopped), SIGKILL after `graceMs`. */
export async function killPlayer(player: SpawnedPlayer, graceMs = 1500): Promise<void> {
  if (player.child.exitCode !== null || player.child.signalCode !== null) return
  signalPlayer(player.pid, 'SIGTERM')
  if (process.platform !== 'win32') signalPlayer(player.pid, 'SIGCONT')
  const timer = setTimeout(() => signalPlayer(player.pid, 'SIGKILL'), graceMs)
  await player.exited
  clearTimeout(timer)
}

/** Synchronous last resort at process exit: SIGKILL the group without waiting. */
export function killPlayerNow(pid: number): void {
  signalPlayer(pid, 'SIGKILL')
}

/**
 * What a player's environment carries: the real path of the dir whose service
 * started it. A same-user process can set it only on processes it starts
 * itself, so it proves "started for this dir" without trusting playback.json.
 */
export const PLAYER_DIR_VAR = 'ACTORS_MUSIC_DIR'

/** The marker environment for a player started for `workDir`. */
export function playerMarker(workDir: string): NodeJS.ProcessEnv {
  return {[PLAYER_DIR_VAR]: realDir(workDir)}
}

function realDir(dir: string): string {
  try {
    return realpathSync(dir)
  } catch {
    return dir
  }
}

/** What /proc/PID/exe names for each player (cvlc is a script that execs vlc, play is a link to sox). */
const PLAYER_PROGRAMS = new Set<string>([...Object.values(PLAYER_EXECUTABLE), 'vlc', 'sox', 'pwsh'])

/**
 * Whether the live process `pid` is a player the service of `workDir` started:
 * its real executable (not its argv[0], which any process sets) is a known
 * player and its environment carries this dir's marker. Unreadable means
 * unproven (another user's process, or no /proc).
 */
export function isPlayerOf(pid: number, workDir: string): boolean {
  try {
    const exe = basename(readlinkSync(`/proc/${pid}/exe`).replace(/ \(deleted\)$/, ''))
    if (!PLAYER_PROGRAMS.has(exe)) return false
    const marker = `${PLAYER_DIR_VAR}=${realDir(workDir)}`
    return readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').includes(marker)
  } catch {
    return false
  }
}

/**
 * Kill a player left behind by a service on `workDir` that crashed (its
 * identity is in the checkpoint). The identity check means a recycled pid is
 * never touched; the player check means a checkpoint a Run rewrote to name
 * another process (pid, start and boot id are public) never decides what is
 * killed: such a process is `not-ours` and left alone.
 */
export function reapOrphanPlayer(
  identity: ProcessIdentity | undefined,
  workDir: string,
): 'reaped' | 'not-ours' | 'gone' {
  if (!identity || !isSameProcess(identity)) return 'gone'
  if (!isPlayerOf(identity.pid, workDir)) return 'not-ours'
  signalPlayer(identity.pid, 'SIGKILL')
  return 'reaped'
}
