/**
 * Running a playback service from start to finish, the same way for
 * `music play` (foreground), `music serve` (standalone, with
 * playback-endpoint.json) and the playback Run (serving the Run's control
 * endpoint): build the queue, pick the player, resume from the checkpoint,
 * open the endpoint, start, stop cleanly on a request or a signal, and never
 * leave a player process behind.
 */
import {randomUuid} from '../../base/platform/builtins.js'
import {mkdtempSync, realpathSync, rmSync} from 'node:fs'
import {makePrivateDir} from '../../base/platform/private-files.js'
import {tmpdir} from 'node:os'
import {resolve} from 'node:path'
import {ActorsError, EXIT, usageError} from '../../base/platform/errors.js'
import {serveControlEndpoint} from '../../kernel/signals/service.js'
import {isSameProcess} from '../../base/platform/process-identity.js'
import {killPlayerNow, reapOrphanPlayer} from './backend.js'
import {readCheckpoint, resumePoint, type PlaybackCheckpoint, type ResumePoint} from './checkpoint.js'
import type {StandaloneServer} from '../../kernel/signals/standalone.js'
import {servePlaybackEndpoint} from './endpoint.js'
import {parsePlayerChoice, resolvePlayer, type ResolvedPlayer} from './players.js'
import {buildQueue} from './queue.js'
import {PlaybackService, type PlaybackOutcome} from './service.js'
import {OUTPUT_MODES, type OutputMode, type PlaybackStatus} from './types.js'

export interface RunPlaybackOptions {
  sources: string[]
  cwd?: string
  player?: string
  loop: boolean
  shuffle: boolean
  /** 0-100; undefined: the checkpoint's volume, else 70. */
  volume?: number
  /** `--output`; undefined: $ACTORS_MUSIC_OUTPUT, else default. */
  output?: string
  /** Checkpoint and endpoint directory (required for `serve`). */
  stateDir?: string
  /** Print a warning for the user (stderr). */
  warn: (message: string) => void
  /** Called once the service exists, before it starts: subscribe views here. */
  onService?: (service: PlaybackService) => void
}

export interface PlaybackRunResult {
  reason: string
  status: PlaybackStatus
  /** How the service was reachable: `standalone`, `run` or `none`. */
  endpoint: 'standalone' | 'run' | 'none'
}

export const DEFAULT_VOLUME = 70

/** `--output` or `$ACTORS_MUSIC_OUTPUT`, checked (exit 2 names the bad value and where it came from). */
export function resolveOutputMode(flag: string | undefined, env: NodeJS.ProcessEnv = process.env): OutputMode {
  const value = flag ?? (env.ACTORS_MUSIC_OUTPUT || undefined) ?? 'default'
  if ((OUTPUT_MODES as readonly string[]).includes(value)) return value as OutputMode
  const where = flag === undefined ? '$ACTORS_MUSIC_OUTPUT' : '--output'
  throw usageError(
    `${where} is ${JSON.stringify(value)}`,
    `use ${OUTPUT_MODES.join(' or ')} (null plays in real time to no audio device)`,
  )
}

/** Whether this process is the service of the Run whose state dir is `stateDir`. */
export function isRunService(stateDir: string | undefined, env: NodeJS.ProcessEnv = process.env): boolean {
  if (!stateDir || !env.ACTORS_STATE_DIR || !env.ACTORS_RUN_INSTANCE) return false
  try {
    return realpathSync(env.ACTORS_STATE_DIR) === realpathSync(stateDir)
  } catch {
    return false
  }
}

/** What a playback starts from: the checked options, the player, the state dir and what its checkpoint says. */
interface PlaybackPlan {
  output: OutputMode
  player: ResolvedPlayer
  stateDir: string | undefined
  checkpoint: PlaybackCheckpoint | undefined
  /** Warnings about the checkpoint, printed once this service owns the state dir. */
  checkpointNotes: string[]
  /** Whether this process is the service of the Run whose state dir it is (isRunService). */
  runMode: boolean
  resume: ResumePoint
}

/** Check the options, build the queue, pick the player and read the checkpoint (runPlayback's first part). */
function planPlayback(options: RunPlaybackOptions, cwd: string): PlaybackPlan {
  if (
    options.volume !== undefined &&
    (!Number.isInteger(options.volume) || options.volume < 0 || options.volume > 100)
  ) {
    throw usageError(`--volume ${options.volume} is out of range`, 'give a whole percent from 0 to 100')
  }
  const output = resolveOutputMode(options.output)
  const choice = parsePlayerChoice(options.player)
  const queue = buildQueue(options.sources, {cwd, shuffle: options.shuffle})
  for (const warning of queue.warnings) options.warn(warning)
  const player = resolvePlayer(choice, output)

  const stateDir = options.stateDir ? resolve(cwd, options.stateDir) : undefined
  if (stateDir) makePrivateDir(stateDir)
  let checkpoint: PlaybackCheckpoint | undefined
  // Notes about the checkpoint wait until this service owns the state dir: a refused second
  // service (exit 5) must not say it resumes anything.
  const checkpointNotes: string[] = []
  if (stateDir) {
    const read = readCheckpoint(stateDir)
    if (read && !read.ok) checkpointNotes.push(`${read.problem}; ignoring it and rebuilding the queue from SOURCE`)
    else if (read?.ok) checkpoint = read.checkpoint
  }
  const runMode = isRunService(stateDir)
  const resume = resumePoint(checkpoint, options.sources, cwd, options.shuffle, queue.tracks)
  if (checkpoint && resume.note) checkpointNotes.push(resume.note)
  return {output, player, stateDir, checkpoint, checkpointNotes, runMode, resume}
}

/** The playback service of `plan`, working in `workDir` as service instance `serviceInstanceId`. */
function newPlaybackService(
  options: RunPlaybackOptions,
  cwd: string,
  plan: PlaybackPlan,
  workDir: string,
  serviceInstanceId: string,
): PlaybackService {
  const {output, player, stateDir, runMode, resume} = plan
  return new PlaybackService({
    tracks: resume.tracks,
    player,
    loop: options.loop,
    shuffle: options.shuffle,
    output,
    volume: options.volume ?? resume.volume ?? DEFAULT_VOLUME,
    start: {index: resume.index, positionSeconds: resume.positionSeconds, paused: resume.paused},
    source: options.sources,
    cwd,
    stateDir,
    workDir,
    serviceInstanceId,
    traceDir: runMode ? stateDir : undefined,
  })
}

/**
 * Stop `service` on SIGINT, SIGTERM or SIGHUP, and end its player if the
 * process exits without a clean stop (the player must not outlive us).
 * Returns what takes the handlers off again.
 */
function stopOnSignals(service: PlaybackService): () => void {
  const onSignal = (signal: NodeJS.Signals) => void service.stop(`signal ${signal}`)
  const onExit = () => {
    const identity = service.backend.playerProcess()
    if (identity && isSameProcess(identity)) killPlayerNow(identity.pid)
  }
  const signals: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP']
  for (const signal of signals) process.on(signal, onSignal)
  process.on('exit', onExit)
  return () => {
    for (const signal of signals) process.off(signal, onSignal)
    process.off('exit', onExit)
  }
}

/**
 * End a player left behind by a service that crashed on `stateDir`, before
 * ours starts; a process playback.json names that is not proven this dir's
 * player (a Run can rewrite the checkpoint) is left alone, and said so.
 */
function endOrphanPlayer(checkpoint: PlaybackCheckpoint, stateDir: string, warn: (message: string) => void): void {
  if (isSameProcess(checkpoint.service_identity)) return
  const pid = checkpoint.player_process?.pid
  const reaped = reapOrphanPlayer(checkpoint.player_process, stateDir)
  if (reaped === 'reaped') warn(`ended player pid ${pid} left behind by an earlier service`)
  if (reaped === 'not-ours') warn(`playback.json names pid ${pid}, which is not this dir's player: left alone`)
}

/** Play until stopped, the queue ends, or a signal arrives. Throws ActorsErrors with SPEC exit codes. */
export async function runPlayback(options: RunPlaybackOptions): Promise<PlaybackRunResult> {
  const cwd = options.cwd ?? process.cwd()
  const plan = planPlayback(options, cwd)
  const {player, stateDir, checkpoint, checkpointNotes, runMode} = plan

  const workDir = stateDir ?? mkdtempSync(resolve(tmpdir(), 'actors-music-'))
  const serviceInstanceId = randomUuid()
  const service = newPlaybackService(options, cwd, plan, workDir, serviceInstanceId)
  options.onService?.(service)

  // Requests that arrive before the player is up wait for it.
  let markReady!: () => void
  const ready = new Promise<void>((r) => (markReady = r))
  const handle = async (action: string, value: string | number | null | undefined) => {
    await ready
    return service.handleRequest(action, value)
  }

  let standalone: StandaloneServer | undefined
  let closeRunEndpoint: (() => Promise<void>) | undefined
  const releaseSignals = stopOnSignals(service)
  const cleanup = async () => {
    releaseSignals()
    await standalone?.close()
    await closeRunEndpoint?.()
    if (!stateDir) rmSync(workDir, {recursive: true, force: true})
  }

  let outcome: PlaybackOutcome
  // Until this service owns the state dir (its endpoint is claimed), it must write nothing there:
  // a refused second service (exit 5) leaves the live one's checkpoint and endpoint alone.
  let claimed = !stateDir
  try {
    if (stateDir && runMode) {
      const server = await serveControlEndpoint({
        stateDir,
        runInstanceId: process.env.ACTORS_RUN_INSTANCE,
        handleSignals: false,
        handle: (request) => handle(request.action, request.input ?? null),
      })
      closeRunEndpoint = () => server.close()
    } else if (stateDir) {
      standalone = await servePlaybackEndpoint(stateDir, handle, serviceInstanceId)
    }
    claimed = true
    for (const note of checkpointNotes) options.warn(note)
    if (checkpoint && stateDir) endOrphanPlayer(checkpoint, stateDir, options.warn)
    try {
      await service.start()
    } catch (error) {
      throw new ActorsError(
        `${player.name} failed to start: ${(error as Error).message}`,
        EXIT.failed,
        `try another player with --player (tried ${player.executable})`,
      )
    }
    markReady()
    outcome = await service.finished
  } catch (error) {
    if (claimed) await service.stop('failed', true).catch(() => {})
    await cleanup()
    throw error
  }
  await cleanup()
  if (outcome.failed) {
    throw new ActorsError(
      `playback failed: ${outcome.reason}`,
      EXIT.failed,
      'check the tracks with the player directly, or try another --player (on a machine without a sound device: --output null)',
    )
  }
  return {
    reason: outcome.reason,
    status: service.getStatus(),
    endpoint: runMode ? 'run' : stateDir ? 'standalone' : 'none',
  }
}
