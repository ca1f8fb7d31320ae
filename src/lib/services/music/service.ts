/**
 * The playback service core: one state machine shared by `music play`,
 * `music serve` and the playback Run. It owns the truth (queue, index, paused
 * intent, volume, last known position), drives one backend, answers requests
 * one at a time, checkpoints every change to `playback.json`, writes events to
 * the Run's Trace, and exposes a tiny store (getStatus + subscribe) that plain
 * lines and the Ink now-playing view render.
 */
import {readProcessIdentity} from '../../base/platform/process-identity.js'
import {appendTraceEvent} from '../../kernel/runs/trace.js'
import type {BackendEvents, PlayerBackend} from './backend.js'
import {PLAYBACK_SCHEMA, writeCheckpoint, type PlaybackCheckpoint} from './checkpoint.js'
import {MpvBackend} from './mpv-backend.js'
import type {ResolvedPlayer} from './players.js'
import {ProcessBackend} from './process-backend.js'
import {parsePlaybackRequest, requestProblemReply, type PlaybackRequest} from './requests.js'
import {projectStatus} from './status.js'
import type {OutputMode, PlaybackAction, PlaybackReply, PlaybackStatus, Track} from './types.js'
import {sleep} from '../../base/platform/sleep.js'

export interface PlaybackServiceOptions {
  tracks: Track[]
  player: ResolvedPlayer
  loop: boolean
  shuffle: boolean
  output: OutputMode
  volume: number
  start: {index: number; positionSeconds: number; paused: boolean}
  /** Recorded in the checkpoint so a restart can tell whether it is the same source. */
  source: string[]
  cwd: string
  /** Where playback.json goes; no checkpoint without it. */
  stateDir?: string
  /** Where the backend may put sockets and generated playlists. */
  workDir: string
  serviceInstanceId: string
  /** A Run's state dir: playback events are appended to its Trace. */
  traceDir?: string
  /** Checkpoint the advancing position this often while playing. */
  checkpointEveryMs?: number
}

export type PlaybackEvent =
  | {type: 'track'; index: number; track: Track}
  | {type: 'pause'}
  | {type: 'play'}
  | {type: 'seek'; percent: number}
  | {type: 'volume'; volume: number}
  | {type: 'stop'; reason: string}
  | {type: 'warning'; message: string}

export type PlaybackListener = (status: PlaybackStatus, event: PlaybackEvent) => void

export interface PlaybackOutcome {
  /** `stopped` (asked to), `ended` (queue ran out), `signal`, or the player failure. */
  reason: string
  failed: boolean
}

/** Pick the backend for a resolved player. */
export function createBackend(options: PlaybackServiceOptions, events: BackendEvents): PlayerBackend {
  const common = {
    tracks: options.tracks,
    loop: options.loop,
    output: options.output,
    executable: options.player.executable,
    workDir: options.workDir,
    events,
  }
  return options.player.name === 'mpv' ? new MpvBackend(common) : new ProcessBackend(options.player.name, common)
}

export class PlaybackService {
  readonly backend: PlayerBackend
  private status: PlaybackStatus
  private paused: boolean
  private readonly listeners = new Set<PlaybackListener>()
  /** Requests run one after another so two controls never interleave on the player. */
  private queue: Promise<unknown> = Promise.resolve()
  private stopping?: Promise<void>
  private timer?: NodeJS.Timeout
  /** The index last announced as a track event (each track change is told once). */
  private announced = -1
  /** Tracks the player finished, and tracks it could not play (a queue of failures ends as a failure). */
  private playedTracks = 0
  private failedTracks = 0
  private resolveFinished!: (outcome: PlaybackOutcome) => void
  /** Resolves once the service stopped and its player is gone. */
  readonly finished: Promise<PlaybackOutcome>

  constructor(private readonly options: PlaybackServiceOptions) {
    this.finished = new Promise((resolve) => (this.resolveFinished = resolve))
    this.paused = options.start.paused
    this.status = {
      state: 'starting',
      index: options.start.index,
      count: options.tracks.length,
      track: options.tracks[options.start.index] ?? null,
      player: options.player.name,
      volume: options.volume,
      position_seconds: options.start.positionSeconds,
      duration_seconds: null,
      progress_percent: null,
      position_updated_at_ms: Date.now(),
      updated_at: new Date().toISOString(),
      loop: options.loop,
      shuffle: options.shuffle,
    }
    this.backend = createBackend(options, {
      onTrack: (index) => this.onTrack(index),
      onEnded: () => void this.onQueueEnded(),
      onFailed: (reason) => {
        this.emit({type: 'warning', message: reason})
        void this.stop(reason, true)
      },
      onWarning: (message) => this.emit({type: 'warning', message}),
      onTrackFailed: (message) => {
        this.failedTracks++
        this.emit({type: 'warning', message})
      },
      onPlayed: () => this.playedTracks++,
    })
  }

  /** The current status, projected to now (what views render). */
  getStatus(): PlaybackStatus {
    return projectStatus(this.status)
  }

  /** Be told about every change; returns the unsubscribe function. */
  subscribe(listener: PlaybackListener): () => void {
    this.listeners.add(listener)
    return () => this.listeners.delete(listener)
  }

  /** Start the player at the resume point; rejects when the player cannot start. */
  async start(): Promise<void> {
    const {start, volume} = this.options
    try {
      await this.backend.start({
        index: start.index,
        positionSeconds: start.positionSeconds,
        paused: start.paused,
        volume,
      })
    } catch (error) {
      await this.backend.stop().catch(() => {})
      this.finishWith({reason: `player failed to start: ${(error as Error).message}`, failed: true})
      throw error
    }
    // A short track (or a player that fails at once) can end playback while start() is still here:
    // then the stop owns the state, and no timer may outlive it (it would hold the process open).
    if (this.stopping) return
    this.status.state = this.paused ? 'paused' : 'playing'
    // The first probe may ask ffprobe (slow on a busy machine): playback ending meanwhile does not wait for it.
    await Promise.race([this.refresh(), this.finished])
    if (this.stopping) return
    if (this.announced !== this.status.index) this.emitTrack()
    else this.checkpoint()
    this.timer = setInterval(() => {
      if (this.status.state !== 'playing') return
      void this.serialized(async () => {
        await this.refresh()
        this.checkpoint()
      })
    }, this.options.checkpointEveryMs ?? 5000)
  }

  /** Answer one request (from a socket, a key press or a signal); never throws. */
  handleRequest(action: string, value?: string | number | null): Promise<PlaybackReply> {
    let request: PlaybackRequest
    try {
      request = parsePlaybackRequest(action, value)
    } catch (error) {
      // A bad value is the sender's mistake: exit 2 (a client that checked first never sends one).
      return Promise.resolve(requestProblemReply(error) ?? {ok: false, error: (error as Error).message})
    }
    return this.serialized(async (): Promise<PlaybackReply> => {
      try {
        await this.apply(request)
        return {ok: true, action: request.action as PlaybackAction, status: this.getStatus()}
      } catch (error) {
        return {ok: false, error: (error as Error).message, ...(this.stopping ? {code: 'stopping'} : {})}
      }
    })
  }

  private serialized<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.queue.then(fn, fn)
    this.queue = run.catch(() => {})
    return run
  }

  private async apply(request: PlaybackRequest): Promise<void> {
    if (this.stopping && request.action !== 'status') throw new Error('playback is stopping')
    switch (request.action) {
      case 'status':
        if (!this.stopping) await this.refresh()
        return
      case 'play':
      case 'pause':
      case 'toggle': {
        const paused = request.action === 'toggle' ? !this.paused : request.action === 'pause'
        if (paused === this.paused) return
        await this.refresh()
        await this.backend.setPaused(paused)
        this.paused = paused
        this.status.state = paused ? 'paused' : 'playing'
        await this.refresh()
        this.changed(paused ? {type: 'pause'} : {type: 'play'})
        return
      }
      case 'next':
      case 'previous': {
        const count = this.options.tracks.length
        const index = this.status.index ?? 0
        let target = request.action === 'next' ? index + 1 : index - 1
        if (target >= count) {
          if (!this.options.loop) {
            await this.stop('ended')
            return
          }
          target = 0
        }
        if (target < 0) target = this.options.loop ? count - 1 : 0
        this.setTrack(target)
        await this.backend.jump(target)
        await this.refresh()
        return
      }
      case 'seek':
        await this.backend.seekPercent(request.percent)
        await this.refresh()
        this.changed({type: 'seek', percent: request.percent})
        return
      case 'volume': {
        const current = this.status.volume ?? this.options.volume
        const volume = Math.max(0, Math.min(100, request.relative ? current + request.volume : request.volume))
        await this.backend.setVolume(volume)
        this.status.volume = volume
        this.changed({type: 'volume', volume})
        return
      }
      case 'stop':
        await this.stop('stopped')
        return
    }
  }

  /** Ask the player where it is (mpv: its own time-pos and duration) and record it. */
  private async refresh(): Promise<void> {
    try {
      const probe = await this.backend.probe()
      if (probe.positionSeconds !== undefined) this.status.position_seconds = Math.max(0, probe.positionSeconds)
      if (probe.durationSeconds !== undefined) this.status.duration_seconds = probe.durationSeconds
      if (probe.index !== undefined && probe.index !== this.status.index) this.setTrack(probe.index)
      this.status.position_updated_at_ms = Date.now()
    } catch {
      // A player between tracks may not know; the clock projection covers the gap.
    }
  }

  private onTrack(index: number): void {
    if (index === this.status.index && index === this.announced) return
    if (index !== this.status.index) this.setTrack(index)
    else this.emitTrack()
    void this.serialized(() => this.refresh()).then(() => this.checkpoint())
  }

  private setTrack(index: number): void {
    this.status.index = index
    this.status.track = this.options.tracks[index] ?? null
    this.status.position_seconds = 0
    this.status.duration_seconds = null
    this.status.position_updated_at_ms = Date.now()
    this.emitTrack()
  }

  private emitTrack(): void {
    const index = this.status.index ?? 0
    this.announced = index
    this.changed({type: 'track', index, track: this.options.tracks[index]})
  }

  /** Record a change: timestamp, checkpoint, Trace, listeners. */
  private changed(event: PlaybackEvent): void {
    this.status.updated_at = new Date().toISOString()
    this.checkpoint()
    this.trace(event)
    this.emit(event)
  }

  private emit(event: PlaybackEvent): void {
    if (event.type === 'warning') this.trace(event)
    const status = this.getStatus()
    for (const listener of this.listeners) {
      try {
        listener(status, event)
      } catch {}
    }
  }

  private trace(event: PlaybackEvent): void {
    if (!this.options.traceDir) return
    const s = this.status
    const summary =
      event.type === 'track'
        ? `track ${event.index + 1}/${s.count}: ${event.track}`
        : event.type === 'volume'
          ? `volume ${event.volume}`
          : event.type === 'seek'
            ? `seek to ${event.percent}%`
            : event.type === 'stop'
              ? `stopped (${event.reason})`
              : event.type === 'warning'
                ? event.message
                : event.type === 'pause'
                  ? 'paused'
                  : 'playing'
    try {
      appendTraceEvent(this.options.traceDir, {
        kind: `music.${event.type}`,
        summary,
        level: event.type === 'warning' ? 'warn' : undefined,
        data: {index: s.index, track: s.track, position_seconds: s.position_seconds, volume: s.volume},
      })
    } catch {
      // The Trace is a record, not a dependency: playback goes on without it.
    }
  }

  /** Write playback.json (when there is a state dir). */
  checkpoint(reason?: string): void {
    if (!this.options.stateDir) return
    const status = this.getStatus()
    const checkpoint: PlaybackCheckpoint = {
      schema: PLAYBACK_SCHEMA,
      ...status,
      ...(reason ? {reason} : {}),
      source: this.options.source,
      cwd: this.options.cwd,
      shuffle: this.options.shuffle,
      loop: this.options.loop,
      queue: this.options.tracks,
      paused: this.paused,
      service_instance_id: this.options.serviceInstanceId,
      service_pid: process.pid,
      service_identity: readProcessIdentity(process.pid),
      player_process: this.status.state === 'stopped' ? undefined : this.backend.playerProcess(),
    }
    try {
      writeCheckpoint(this.options.stateDir, checkpoint)
    } catch {
      // A full disk must not stop the music; the next change tries again.
    }
  }

  /** The queue ran out: `ended`, unless every track the player tried failed (then nothing was heard). */
  private onQueueEnded(): Promise<void> {
    if (this.playedTracks === 0 && this.failedTracks > 0) {
      const reason = `nothing played: ${this.options.player.name} could not play ${this.failedTracks === 1 ? 'the track' : `any of ${this.failedTracks} tracks`}`
      return this.stop(reason, true)
    }
    return this.stop('ended')
  }

  /** Stop playback and the player (idempotent); resolves once the player is gone. */
  stop(reason = 'stopped', failed = false): Promise<void> {
    this.stopping ??= (async () => {
      if (this.timer) clearInterval(this.timer)
      if (this.status.state === 'playing' || this.status.state === 'paused') {
        await Promise.race([this.refresh(), sleep(500)])
        this.status = projectStatus(this.status)
      }
      await this.backend.stop().catch(() => {})
      if (reason === 'ended' && this.status.duration_seconds !== null)
        this.status.position_seconds = this.status.duration_seconds
      this.status.state = 'stopped'
      this.status.reason = reason
      this.status.updated_at = new Date().toISOString()
      this.checkpoint(reason)
      this.trace({type: 'stop', reason})
      this.emit({type: 'stop', reason})
      this.finishWith({reason, failed})
    })()
    return this.stopping
  }

  private finishWith(outcome: PlaybackOutcome): void {
    if (this.timer) clearInterval(this.timer)
    this.resolveFinished(outcome)
  }
}
