/**
 * Backends driven by process control (ffplay, cvlc, sox play, afplay, wmp):
 * one player process per track, in its own process group. Pause is
 * SIGSTOP/SIGCONT of that group (a kill and a restart at the offset where
 * signals do not exist), seek and volume restart the track at the current
 * offset with the player's own options, and the position is the backend's
 * clock since the process started.
 */
import {CAN_START_AT_OFFSET, buildTrackCommand} from './player-argv.js'
import {probeDuration} from './track-duration.js'
import {trackFailure} from './track-outcome.js'
import {
  killPlayer,
  signalPlayer,
  playerMarker,
  spawnPlayer,
  type BackendOptions,
  type BackendProbe,
  type PlayerBackend,
  type SpawnedPlayer,
  type StartAt,
} from './backend.js'
import type {PlayerName} from './types.js'

type ProcessPlayer = Exclude<PlayerName, 'mpv'>

/** A track that ran at least this long before failing counts as played (resets the failure streak). */
const PLAYED_MS = 1000

export class ProcessBackend implements PlayerBackend {
  private current?: SpawnedPlayer
  /** Bumped on every spawn and kill so exits of replaced processes are ignored. */
  private generation = 0
  private index = 0
  private volume = 70
  private paused = false
  private stopping = false
  /** Track position when the current process started or was last resumed. */
  private offsetSeconds = 0
  private clockStartedAt = 0
  /** Frozen position while paused. */
  private pausedAt = 0
  private failures = 0
  private readonly canSignal = process.platform !== 'win32'
  /** Replaced processes still on their way out; stop() waits for them too. */
  private readonly dying = new Set<Promise<void>>()

  constructor(
    readonly name: ProcessPlayer,
    private readonly options: BackendOptions,
  ) {}

  async start(at: StartAt): Promise<void> {
    this.index = at.index
    this.volume = at.volume
    this.paused = at.paused
    this.pausedAt = at.positionSeconds
    this.options.events.onTrack(this.index)
    if (!at.paused) this.spawnAt(at.positionSeconds)
  }

  private position(): number {
    if (this.paused) return this.pausedAt
    if (!this.current) return this.offsetSeconds
    return this.offsetSeconds + (Date.now() - this.clockStartedAt) / 1000
  }

  private spawnAt(positionSeconds: number): void {
    this.discardCurrent()
    const generation = ++this.generation
    const track = this.options.tracks[this.index]
    const command = buildTrackCommand(this.name, {
      executable: this.options.executable,
      track,
      startSeconds: positionSeconds,
      volume: this.volume,
      output: this.options.output,
    })
    // Its stderr is kept: ffplay exits 0 on a file or a device it cannot open and says so only there.
    const player = spawnPlayer(
      command.command,
      command.args,
      {...command.env, ...playerMarker(this.options.workDir)},
      false,
      true,
    )
    this.current = player
    this.offsetSeconds = positionSeconds
    this.clockStartedAt = Date.now()
    const startedAt = Date.now()
    void player.exited.then(({code, signal}) => {
      if (generation !== this.generation || this.stopping) return
      this.current = undefined
      const failure = trackFailure({player: this.name, track, code, signal, stderr: player.stderrTail()})
      this.onTrackExit(failure, Date.now() - startedAt)
    })
  }

  /** Kill the current process without waiting; its exit is ignored (generation moved on). */
  private discardCurrent(): void {
    const previous = this.current
    this.current = undefined
    this.generation++
    if (previous) {
      const gone = killPlayer(previous).finally(() => this.dying.delete(gone))
      this.dying.add(gone)
    }
  }

  private onTrackExit(failure: string | undefined, ranMs: number): void {
    const count = this.options.tracks.length
    if (failure === undefined || ranMs >= PLAYED_MS) this.failures = 0
    if (failure === undefined) this.options.events.onPlayed(this.index)
    else {
      this.failures++
      this.options.events.onTrackFailed(
        `${this.name} could not play ${this.options.tracks[this.index]} (${failure}), skipped`,
      )
      if (this.failures >= count) {
        this.options.events.onFailed(`${this.name} failed on every track`)
        return
      }
    }
    const next = this.index + 1
    if (next >= count && !this.options.loop) {
      this.options.events.onEnded()
      return
    }
    this.index = next % count
    this.options.events.onTrack(this.index)
    this.spawnAt(0)
  }

  async jump(index: number): Promise<void> {
    this.index = index
    this.options.events.onTrack(index)
    if (this.paused) {
      this.discardCurrent()
      this.pausedAt = 0
    } else this.spawnAt(0)
  }

  async setPaused(paused: boolean): Promise<void> {
    if (paused === this.paused) return
    if (paused) {
      this.pausedAt = this.position()
      this.paused = true
      if (this.current && this.canSignal) signalPlayer(this.current.pid, 'SIGSTOP')
      else this.discardCurrent()
      return
    }
    this.paused = false
    if (this.current && this.canSignal) {
      signalPlayer(this.current.pid, 'SIGCONT')
      this.offsetSeconds = this.pausedAt
      this.clockStartedAt = Date.now()
    } else this.spawnAt(this.pausedAt)
  }

  async seekPercent(percent: number): Promise<void> {
    if (!CAN_START_AT_OFFSET[this.name])
      throw new Error(`${this.name} cannot start a track at an offset, so it cannot seek`)
    const duration = await probeDuration(this.options.tracks[this.index])
    if (duration === undefined)
      throw new Error(
        `the duration of ${this.options.tracks[this.index]} is unknown (install ffprobe or soxi), so it cannot seek by percent`,
      )
    const target = (duration * percent) / 100
    if (this.paused) {
      this.discardCurrent()
      this.pausedAt = target
    } else this.spawnAt(target)
  }

  async setVolume(volume: number): Promise<void> {
    if (volume === this.volume) return
    this.volume = volume
    // The player's own volume option only applies at start: restart at the current offset.
    if (this.paused) this.discardCurrent()
    else if (this.current) this.spawnAt(this.position())
  }

  async probe(): Promise<BackendProbe> {
    const durationSeconds = await probeDuration(this.options.tracks[this.index])
    let positionSeconds = this.position()
    if (durationSeconds !== undefined) positionSeconds = Math.min(positionSeconds, durationSeconds)
    return {index: this.index, paused: this.paused, positionSeconds, durationSeconds}
  }

  async stop(): Promise<void> {
    this.stopping = true
    this.generation++
    const current = this.current
    this.current = undefined
    if (current) await killPlayer(current)
    await Promise.all(this.dying)
  }

  playerProcess() {
    return this.current?.identity
  }
}
