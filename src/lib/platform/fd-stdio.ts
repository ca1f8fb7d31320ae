/**
 * stdin and stdout as plain file descriptors, for a process that speaks a
 * line protocol on them (`actors mcp`). process.stdin and process.stdout on a
 * pipe or a socket (what an agent host spawns a server with) are net.Socket
 * streams: touching either loads node:net and the stream modules, about
 * 2 ms of the server's start before its first byte is read. These two give
 * the same events through reads and writes on the descriptors themselves.
 *
 * Where a descriptor does not suit that (a terminal, a descriptor set
 * non-blocking by whoever opened it: a read or write would fail with EAGAIN
 * instead of waiting), the process's own stream takes over, from the first
 * byte not yet read or written, so nothing is lost nor reordered.
 */
import {EventEmitter} from 'node:events'
import {fstatSync, read} from 'node:fs'
import {wouldBlock, writeUntilBlocked} from './write-fd.js'

/** What a reader of the session's input uses of a Readable (the MCP SDK's stdio transport: events and pause). */
export interface ByteSource {
  on(event: 'data', listener: (chunk: Buffer) => void): this
  on(event: 'end' | 'close', listener: () => void): this
  on(event: 'error', listener: (error: Error) => void): this
  off(event: string, listener: (...args: any[]) => void): this
  listenerCount(event: string): number
  pause(): this
  readonly readableEnded: boolean
  readonly destroyed: boolean
}

/** What a writer of the session's output uses of a Writable. */
export interface ByteSink {
  write(chunk: string | Uint8Array, callback?: (error?: Error | null) => void): boolean
  on(event: string, listener: (...args: any[]) => void): this
  once(event: string, listener: (...args: any[]) => void): this
  off(event: string, listener: (...args: any[]) => void): this
  listeners(event: string): ReturnType<EventEmitter['listeners']>
}

const READ_BYTES = 64 * 1024

/** True when `fd` is open and reads or writes on it wait for data (a pipe, a socket, a file), so the descriptor serves. */
function descriptorServes(fd: number): boolean {
  try {
    const stat = fstatSync(fd)
    // A character device is a terminal (or /dev/null): the process's stream knows how to treat it.
    return stat.isFIFO() || stat.isSocket() || stat.isFile()
  } catch {
    return false
  }
}

/**
 * Emit 'error' only to whoever listens: an EventEmitter throws an 'error'
 * nobody listens to, and a client that closed its pipe before the server
 * listened must not crash it with a stack trace (what failed stays failed).
 */
export function emitErrorIfHeard(emitter: EventEmitter, error: Error): void {
  if (emitter.listenerCount('error') > 0) emitter.emit('error', error)
}

/**
 * Descriptor `fd` as a source of chunks, read as soon as a 'data' listener is
 * added; `stream()` (process.stdin) takes over where the descriptor does not
 * serve. Ends with 'end' then 'close'; a failed read emits 'error' then 'close'.
 */
export function fdSource(fd: number, stream: () => NodeJS.ReadableStream): ByteSource {
  if (!descriptorServes(fd)) return stream() as unknown as ByteSource
  return new FdSource(fd, stream)
}

class FdSource extends EventEmitter implements ByteSource {
  readableEnded = false
  destroyed = false
  private reading = false
  private paused = false
  private held: Buffer[] = []
  /** process.stdin, once the descriptor proved non-blocking. */
  private handedTo: NodeJS.ReadableStream | undefined

  constructor(
    private readonly fd: number,
    private readonly stream: () => NodeJS.ReadableStream,
  ) {
    super()
    this.on('newListener', (event: string) => {
      if (event === 'data') queueMicrotask(() => this.resume())
    })
  }

  pause(): this {
    this.paused = true
    this.handedTo?.pause()
    return this
  }

  resume(): this {
    this.paused = false
    while (!this.paused && this.held.length > 0) this.emit('data', this.held.shift())
    if (this.paused) return this
    if (this.handedTo) this.handedTo.resume()
    else this.readNext()
    return this
  }

  private readNext(): void {
    if (this.reading || this.paused || this.destroyed) return
    this.reading = true
    const buffer = Buffer.allocUnsafe(READ_BYTES)
    read(this.fd, buffer, 0, READ_BYTES, null, (error, bytes) => {
      this.reading = false
      if (error) return wouldBlock(error) ? this.handOver() : this.fail(error)
      if (bytes === 0) return this.finish()
      const chunk = buffer.subarray(0, bytes)
      if (this.paused) this.held.push(chunk)
      else this.emit('data', chunk)
      this.readNext()
    })
  }

  /** The descriptor is non-blocking: the process's stream reads the rest and its events become ours. */
  private handOver(): void {
    const stream = this.stream()
    this.handedTo = stream
    stream.on('data', (chunk: Buffer) => this.emit('data', chunk))
    stream.on('end', () => this.finish())
    stream.on('error', (error) => this.fail(error))
    if (this.paused) stream.pause()
  }

  private finish(): void {
    if (this.destroyed) return
    this.readableEnded = true
    this.destroyed = true
    this.emit('end')
    this.emit('close')
  }

  private fail(error: Error): void {
    if (this.destroyed) return
    this.destroyed = true
    emitErrorIfHeard(this, error)
    this.emit('close')
  }
}

/**
 * Descriptor `fd` as a sink: each write goes out whole before write returns
 * (as process.stdout does on a pipe on Linux); `stream()` (process.stdout)
 * takes over where the descriptor does not serve. A failed write (the reader
 * gone: EPIPE) emits 'error' once, as the stream would.
 */
export function fdSink(fd: number, stream: () => NodeJS.WritableStream): ByteSink {
  if (!descriptorServes(fd)) return stream() as unknown as ByteSink
  return new FdSink(fd, stream)
}

class FdSink extends EventEmitter implements ByteSink {
  private takenOver: NodeJS.WritableStream | undefined
  private failed: Error | undefined

  constructor(
    private readonly fd: number,
    private readonly stream: () => NodeJS.WritableStream,
  ) {
    super()
  }

  write(chunk: string | Uint8Array, callback?: (error?: Error | null) => void): boolean {
    if (this.takenOver) return this.takenOver.write(chunk, callback)
    if (this.failed) {
      const failed = this.failed
      process.nextTick(() => callback?.(failed))
      return false
    }
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk
    let done: number
    try {
      done = writeUntilBlocked(this.fd, bytes)
    } catch (error) {
      this.failed = error as Error
      process.nextTick(() => {
        callback?.(error as Error)
        emitErrorIfHeard(this, error as Error)
      })
      return false
    }
    if (done < bytes.length) {
      // Non-blocking descriptor: the stream queues the rest and everything after it, in order.
      this.takenOver = this.stream()
      this.takenOver.on('error', (streamError) => emitErrorIfHeard(this, streamError))
      this.takenOver.on('drain', () => this.emit('drain'))
      return this.takenOver.write(bytes.subarray(done), callback)
    }
    if (callback) process.nextTick(callback)
    return true
  }
}
