/**
 * A client for mpv's JSON IPC (`--input-ipc-server`): one JSON line per
 * command with a `request_id`, replies matched by id, events and observed
 * property changes dispatched to listeners. This is how pause, seek and
 * volume change the running track instead of restarting it.
 */
import type {Socket} from 'node:net'
import {nodeNet} from '../../base/platform/builtins.js'
import {sleep} from '../../base/platform/sleep.js'

export interface MpvEvent {
  event: string
  /** For `property-change`: the observed property and its value. */
  name?: string
  data?: unknown
  id?: number
  reason?: string
  [key: string]: unknown
}

interface Pending {
  resolve: (value: unknown) => void
  reject: (error: Error) => void
  timer: NodeJS.Timeout
}

/** One connection to a running mpv. */
export class MpvIpcClient {
  private nextId = 1
  private buffer = ''
  private readonly pending = new Map<number, Pending>()
  private readonly listeners = new Set<(event: MpvEvent) => void>()
  private closed = false

  private constructor(private readonly socket: Socket) {
    socket.setEncoding('utf8')
    socket.on('data', (chunk: string) => this.onData(chunk))
    socket.on('error', () => this.onClose())
    socket.on('close', () => this.onClose())
  }

  /** Speak IPC over an already connected stream (mpv's `--input-ipc-client=fd://3`). */
  static over(socket: Socket): MpvIpcClient {
    return new MpvIpcClient(socket)
  }

  /** Connect to `path`, retrying until mpv has created the socket or `timeoutMs` passes. */
  static async connect(path: string, timeoutMs = 10_000, alive: () => boolean = () => true): Promise<MpvIpcClient> {
    const deadline = Date.now() + timeoutMs
    let lastError: Error | undefined
    while (Date.now() < deadline && alive()) {
      try {
        const socket = await new Promise<Socket>((resolve, reject) => {
          const s = nodeNet().createConnection(path)
          s.once('connect', () => resolve(s))
          s.once('error', reject)
        })
        return new MpvIpcClient(socket)
      } catch (error) {
        lastError = error as Error
        // mpv creates the socket a few ms after it starts; no notification exists for that.
        await sleep(30)
      }
    }
    throw new Error(`mpv IPC socket ${path} did not accept a connection${lastError ? ` (${lastError.message})` : ''}`)
  }

  /** Send a command (e.g. `['set_property', 'pause', true]`) and resolve with its `data`. */
  command(args: unknown[], timeoutMs = 5000): Promise<unknown> {
    if (this.closed) return Promise.reject(new Error('mpv IPC connection is closed'))
    const id = this.nextId++
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id)
        reject(new Error(`mpv did not answer ${JSON.stringify(args[0])} within ${timeoutMs}ms`))
      }, timeoutMs)
      this.pending.set(id, {resolve, reject, timer})
      this.socket.write(JSON.stringify({command: args, request_id: id}) + '\n')
    })
  }

  /** Read a property; undefined when mpv has no value for it right now (e.g. no file loaded). */
  async get(name: string): Promise<unknown> {
    try {
      return await this.command(['get_property', name])
    } catch (error) {
      if (/property unavailable/.test((error as Error).message)) return undefined
      throw error
    }
  }

  /** Subscribe to events and property changes; returns the unsubscribe function. */
  onEvent(listener: (event: MpvEvent) => void): () => void {
    this.listeners.add(listener)
    return () => this.listeners.delete(listener)
  }

  /** Ask mpv to report changes of `name` as `property-change` events. */
  async observe(id: number, name: string): Promise<void> {
    await this.command(['observe_property', id, name])
  }

  get isClosed(): boolean {
    return this.closed
  }

  close(): void {
    this.socket.destroy()
    this.onClose()
  }

  private onData(chunk: string): void {
    this.buffer += chunk
    let newline: number
    while ((newline = this.buffer.indexOf('\n')) >= 0) {
      const line = this.buffer.slice(0, newline)
      this.buffer = this.buffer.slice(newline + 1)
      if (line.trim() === '') continue
      let message: Record<string, unknown>
      try {
        message = JSON.parse(line)
      } catch {
        continue
      }
      if (typeof message.request_id === 'number' && this.pending.has(message.request_id)) {
        const pending = this.pending.get(message.request_id)!
        this.pending.delete(message.request_id)
        clearTimeout(pending.timer)
        if (message.error === 'success') pending.resolve(message.data)
        else pending.reject(new Error(`mpv: ${String(message.error)}`))
      } else if (typeof message.event === 'string') {
        for (const listener of this.listeners) listener(message as MpvEvent)
      }
    }
  }

  private onClose(): void {
    if (this.closed) return
    this.closed = true
    for (const [, pending] of this.pending) {
      clearTimeout(pending.timer)
      pending.reject(new Error('mpv IPC connection closed'))
    }
    this.pending.clear()
    for (const listener of this.listeners) listener({event: 'ipc-closed'})
  }
}
