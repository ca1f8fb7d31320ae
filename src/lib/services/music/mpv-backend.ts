/**
 * The mpv backend: one long-lived mpv holding the whole queue as its own
 * playlist (so mpv's `playlist-pos` is our index), driven over its JSON IPC
 * socket. Pause, seek and volume change the running track; position and
 * duration come from mpv itself.
 */
import type {Socket} from 'node:net'
import {join} from 'node:path'
import {socketPathIn} from '../../base/platform/line-socket.js'
import {unlinkQuietly, writeFileAtomic} from '../../base/platform/state-files.js'
import {
  killPlayer,
  playerMarker,
  spawnPlayer,
  type BackendOptions,
  type BackendProbe,
  type PlayerBackend,
  type SpawnedPlayer,
  type StartAt,
} from './backend.js'
import {MpvIpcClient, type MpvEvent} from './mpv-ipc.js'
import {sleep} from '../../base/platform/sleep.js'

/** How long a seek waits for mpv's position to reach its target before the reply goes out anyway. */
const SEEK_SETTLE_MS = 1000
/** How long a seek is retried while mpv refuses it because the track is still loading (start-up, right after next). */
const SEEK_LOADING_MS = 5000

/**
 * Send a seek, retried while mpv refuses it: it does until the track (after
 * start-up, a jump or `next`) is loaded. The last refusal is thrown once
 * SEEK_LOADING_MS have passed.
 */
async function seekWhenLoaded(ipc: MpvIpcClient, seek: unknown[]): Promise<void> {
  const deadline = Date.now() + SEEK_LOADING_MS
  for (;;) {
    try {
      await ipc.command(seek)
      return
    } catch (error) {
      if (Date.now() >= deadline || ipc.isClosed) throw error
      await sleep(30)
    }
  }
}

/** The mpv command line for a queue (exported for tests and docs). */
export function buildMpvArgs(options: {
  socket: string
  playlistFile: string
  at: StartAt
  loop: boolean
  output: 'default' | 'null'
}): string[] {
  const {at} = options
  return [
    '--idle=yes',
    '--no-terminal',
    '--really-quiet',
    '--no-video',
    '--keep-open=no',
    '--loop-file=no',
    '--shuffle=no',
    '--save-position-on-quit=no',
    '--resume-playback=no',
    // Our own channel: a socketpair on fd 3. mpv quits when it closes, so it never outlives the service.
    '--input-ipc-client=fd://3',
    // The public socket, for anyone who wants to ask mpv directly (tests do).
    `--input-ipc-server=${options.socket}`,
    `--volume=${at.volume}`,
    '--volume-max=100',
    `--loop-playlist=${options.loop ? 'inf' : 'no'}`,
    `--playlist-start=${at.index}`,
    // Start paused when resuming mid-track, so the seek lands before any sound.
    ...(at.paused || at.positionSeconds > 0 ? ['--pause=yes'] : []),
    ...(options.output === 'null' ? ['--ao=null'] : []),
    `--playlist=${options.playlistFile}`,
  ]
}

/**
 * One track as a line of mpv's m3u queue. A name is written as it is unless
 * a line cannot hold it (a newline or carriage return in it, a leading `#`
 * or surrounding spaces that the m3u reader would take as a comment or trim):
 * then an absolute path goes as a `file://` URL, which mpv percent-decodes
 * back to the same name, and a URL gets those characters percent-encoded.
 * The queue keeps one line per track, so mpv's playlist-pos stays our index.
 */
export function m3uEntry(track: string): string {
  if (!/[\r\n]|^[#\s]|\s$/.test(track)) return track
  if (track.startsWith('/')) return `file://${encodeURIComponent(track).replaceAll('%2F', '/')}`
  return track.replace(/[\r\n]|^[#\s]+|\s+$/g, encodeURIComponent)
}

const OBSERVE = {playlistPos: 1, idle: 2} as const

export class MpvBackend implements PlayerBackend {
  readonly name = 'mpv' as const
  private player?: SpawnedPlayer
  private ipc?: MpvIpcClient
  private readonly socket: string
  private readonly playlistFile: string
  private stopping = false
  private sawTrack = false
  private lastIndex = -1

  constructor(private readonly options: BackendOptions) {
    this.socket = socketPathIn(options.workDir, 'mpv.sock')
    this.playlistFile = join(options.workDir, 'mpv-queue.m3u')
  }

  /** The IPC socket path (tests read mpv's own state through it). */
  get socketPath(): string {
    return this.socket
  }

  async start(at: StartAt): Promise<void> {
    writeFileAtomic(this.playlistFile, this.options.tracks.map(m3uEntry).join('\n') + '\n')
    unlinkQuietly(this.socket)
    const args = buildMpvArgs({
      socket: this.socket,
      playlistFile: this.playlistFile,
      at,
      loop: this.options.loop,
      output: this.options.output,
    })
    const player = spawnPlayer(this.options.executable, args, playerMarker(this.options.workDir), true)
    this.player = player
    void player.exited.then(({code, signal}) => {
      if (!this.stopping) this.options.events.onFailed(`mpv exited unexpectedly (${signal ?? `code ${code}`})`)
    })
    const channel = player.child.stdio[3]
    if (!channel) throw new Error('mpv was started without its control channel')
    const ipc = MpvIpcClient.over(channel as Socket)
    this.ipc = ipc
    // "playing" is only true once mpv holds the first track: wait for playlist-pos to leave -1.
    const firstTrack = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('mpv did not start the first track within 10s')), 10_000)
      const off = ipc.onEvent((e) => {
        if (e.event === 'ipc-closed') reject(new Error('mpv exited before playing'))
        else if (
          !(e.event === 'property-change' && e.id === OBSERVE.playlistPos && typeof e.data === 'number' && e.data >= 0)
        )
          return
        clearTimeout(timer)
        off()
        resolve()
      })
    })
    firstTrack.catch(() => {})
    ipc.onEvent((e) => this.onEvent(e))
    await ipc.observe(OBSERVE.playlistPos, 'playlist-pos')
    await ipc.observe(OBSERVE.idle, 'idle-active')
    await firstTrack
    if (at.positionSeconds > 0) {
      // Resume where the checkpoint says once the first file has loaded (or, failing that, play from 0).
      await seekWhenLoaded(ipc, ['seek', at.positionSeconds, 'absolute']).catch(() => {})
      if (!at.paused) await ipc.command(['set_property', 'pause', false])
    }
  }

  private onEvent(e: MpvEvent): void {
    if (e.event === 'property-change' && e.id === OBSERVE.playlistPos && typeof e.data === 'number' && e.data >= 0) {
      this.sawTrack = true
      if (e.data !== this.lastIndex) {
        this.lastIndex = e.data
        this.options.events.onTrack(e.data)
      }
    } else if (
      e.event === 'property-change' &&
      e.id === OBSERVE.idle &&
      e.data === true &&
      this.sawTrack &&
      !this.stopping
    ) {
      this.options.events.onEnded()
    } else if (e.event === 'end-file' && e.reason === 'error') {
      this.options.events.onTrackFailed(
        `mpv could not play entry ${this.lastIndex + 1} (${String(e.file_error ?? 'error')}), skipped`,
      )
    } else if (e.event === 'end-file' && e.reason === 'eof') {
      this.options.events.onPlayed(this.lastIndex)
    }
  }

  private requireIpc(): MpvIpcClient {
    if (!this.ipc || this.ipc.isClosed) throw new Error('mpv is not running')
    return this.ipc
  }

  async jump(index: number): Promise<void> {
    await this.requireIpc().command(['set_property', 'playlist-pos', index])
  }

  async setPaused(paused: boolean): Promise<void> {
    await this.requireIpc().command(['set_property', 'pause', paused])
  }

  async seekPercent(percent: number): Promise<void> {
    const ipc = this.requireIpc()
    await seekWhenLoaded(ipc, ['seek', percent, 'absolute-percent'])
    // mpv answers once the seek is queued, and time-pos moves only when it lands: wait for that (at most
    // SEEK_SETTLE_MS), so the status a `seek` replies with shows the new place, not the old one.
    const duration = await ipc.get('duration')
    if (typeof duration !== 'number' || !(duration > 0)) return
    const target = (percent / 100) * duration
    for (const deadline = Date.now() + SEEK_SETTLE_MS; Date.now() < deadline; ) {
      const position = await ipc.get('time-pos')
      if (typeof position === 'number' && position >= target - 0.25 && position <= target + 2) return
      await sleep(20)
    }
  }

  async setVolume(volume: number): Promise<void> {
    await this.requireIpc().command(['set_property', 'volume', volume])
  }

  async probe(): Promise<BackendProbe> {
    const ipc = this.requireIpc()
    const [pos, duration, pause, index] = await Promise.all([
      ipc.get('time-pos'),
      ipc.get('duration'),
      ipc.get('pause'),
      ipc.get('playlist-pos'),
    ])
    return {
      positionSeconds: typeof pos === 'number' ? pos : undefined,
      durationSeconds: typeof duration === 'number' ? duration : undefined,
      paused: typeof pause === 'boolean' ? pause : undefined,
      index: typeof index === 'number' && index >= 0 ? index : undefined,
    }
  }

  async stop(): Promise<void> {
    this.stopping = true
    const player = this.player
    if (!player) return
    if (this.ipc && !this.ipc.isClosed) {
      // Ask politely first; the group kill below is the guarantee.
      await Promise.race([this.ipc.command(['quit'], 1000).catch(() => {}), sleep(1000)])
      await Promise.race([player.exited, sleep(500)])
    }
    await killPlayer(player)
    this.ipc?.close()
    for (const file of [this.socket, this.playlistFile]) {
      unlinkQuietly(file)
    }
  }

  playerProcess() {
    return this.player?.identity
  }
}
