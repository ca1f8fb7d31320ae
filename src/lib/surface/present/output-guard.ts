/**
 * What happens when stdout cannot take more (SPEC: Commands): a reader that
 * closed the pipe early (`actors logs RUN | head`) ends the command quietly
 * with the exit code it would have had anyway; a full disk (`> /dev/full`,
 * ENOSPC) says so in one line and exits 1. Never a stack trace, never
 * "internal error". Both front ends call guardStdout() first; after the
 * first failed write every later one is dropped (its callback gets the
 * error, so a `wait` knows its batch was not printed and leaves it for the
 * next wait), and long-running commands stop at `stdoutClosed`.
 */
import {EXIT} from '../../base/platform/errors.js'
import {writeUntilBlocked} from '../../base/platform/write-fd.js'

/** Errors that mean "the output went nowhere", not a bug. */
const OUTPUT_ERRORS = new Set(['EPIPE', 'ENOSPC', 'EDQUOT', 'EFBIG', 'EIO', 'ERR_STREAM_DESTROYED'])

let closed: AbortController | undefined
let failure: NodeJS.ErrnoException | undefined

/**
 * Aborted once stdout failed: a follow or a watch stops instead of writing
 * into the void. Made on first use: AbortController is a global Node loads
 * lazily (half a millisecond of every command's start otherwise).
 */
export function stdoutClosed(): AbortSignal {
  closed ??= new AbortController()
  if (failure && !closed.signal.aborted) closed.abort()
  return closed.signal
}

/** The error stdout failed with, once it did (reportError stays quiet about it: it was said here). */
export function stdoutFailure(): NodeJS.ErrnoException | undefined {
  return failure
}

/** Whether `error` is a write to stdout that failed because of where it goes. */
export function isOutputError(error: unknown): error is NodeJS.ErrnoException {
  const code = (error as NodeJS.ErrnoException | undefined)?.code
  return code !== undefined && OUTPUT_ERRORS.has(code) && (error as NodeJS.ErrnoException).syscall !== 'open'
}

/** Say why stdout failed, once: nothing for a closed pipe, one line and exit 1 for a full disk. */
function outputFailed(error: NodeJS.ErrnoException): void {
  if (failure) return
  failure = error
  closed?.abort()
  if (error.code === 'EPIPE' || error.code === 'ERR_STREAM_DESTROYED') return
  process.exitCode = EXIT.failed
  process.stderr.write(
    `actors: cannot write the output: ${error.code === 'ENOSPC' ? 'no space left on the device' : error.message}\n  fix: free space where stdout goes, or send it elsewhere\n`,
  )
}

type WriteCallback = (error?: Error | null) => void

/** True while guardStdout() holds process.stdout unmade: writeWhole() may then write to descriptor 1 itself. */
let direct = false
/** Whether process.stderr was built; unknown (true) unless the lazy guard tracks it. */
let stderrMade = true

/**
 * Make stdout fail quietly (see above). Idempotent. `lazy` (the fast front
 * end, which runs before anything touched stdout): without making it, since
 * Node builds process.stdout on first use and for a pipe that loads the net
 * and stream modules (milliseconds at start-up). The guard then goes on when
 * something first asks for process.stdout, and writeWhole() reaches the
 * descriptor directly until then.
 */
export function guardStdout(options: {lazy?: boolean} = {}): void {
  if (direct) return
  if (!options.lazy || !isUnmade('stdout')) {
    guardStream(process.stdout)
    return
  }
  direct = true
  onFirstUse('stdout', (stream) => {
    direct = false
    guardStream(stream)
  })
  if (isUnmade('stderr')) {
    stderrMade = false
    onFirstUse('stderr', () => (stderrMade = true))
  }
}

/** Whether Node still builds process[name] on first use (a configurable getter), so it can be watched for that. */
function isUnmade(name: 'stdout' | 'stderr'): boolean {
  const made = Object.getOwnPropertyDescriptor(process, name)
  return made?.get !== undefined && made.configurable === true
}

/** Call `first` with process[name] when something first asks for it; Node's own getter then serves it again. */
function onFirstUse(name: 'stdout' | 'stderr', first: (stream: NodeJS.WriteStream) => void): void {
  const made = Object.getOwnPropertyDescriptor(process, name)!
  Object.defineProperty(process, name, {
    configurable: true,
    enumerable: made.enumerable,
    get() {
      Object.defineProperty(process, name, made)
      const stream = process[name]
      first(stream)
      return stream
    },
  })
}

/**
 * Exit, with process.exitCode, once the failures of writes already made are
 * heard (a stream reports them on the next tick: a full disk must still say
 * so and exit 1), unless a write is still queued (a full pipe): then the
 * natural exit drains it. A finished command need not wait for Node to tear
 * its heap down, about 10 ms that a reader waiting on the process sees.
 *
 * Node 26 and later end by Node's own exit instead: there a process.exit()
 * made while V8's worker thread still runs a task it was handed (after `logs
 * --json` of a few MB) deadlocks in the teardown, the main thread waiting on
 * that worker for ever (3 exits in 10 right after the work, 1 in 20 one loop
 * turn later, none of 30 natural ones). An unref'd check still exits a second
 * after everything is flushed, so a handle left open cannot keep a finished
 * command alive.
 */
export function exitIfFlushed(): void {
  const queued = (stream: NodeJS.WriteStream) => stream.writableLength > 0 || stream.writableNeedDrain
  const flushed = () => !((!direct && queued(process.stdout)) || (stderrMade && queued(process.stderr)))
  if (EXIT_DEADLOCKS) {
    setInterval(() => flushed() && process.exit(), 1000).unref()
    return
  }
  // No stream was made: every write was a write(2) whose failure was heard then. Exit now, before the event
  // loop turns and runs the tasks V8 left for it (after a 2,000-Run listing, a young-generation collection).
  if (direct && !stderrMade) process.exit()
  setImmediate(() => flushed() && process.exit())
}

/** Whether this Node's process.exit() can deadlock on a busy V8 worker (see exitIfFlushed). */
const EXIT_DEADLOCKS = Number(process.versions.node.split('.')[0]) >= 26

/**
 * `text` as UTF-8. ASCII text (JSON of ids, times and numbers nearly always
 * is) is copied a byte per character through the latin1 encoder, which for
 * ASCII gives the same bytes; Node 20's UTF-8 encoder walks a long string
 * character by character (a 1.2 MB listing: about 4 ms against 0.4 ms for
 * the length check). A string is ASCII exactly when its UTF-8 length equals
 * its length: every other code unit takes two bytes or more.
 */
function encodeUtf8(text: string): Buffer {
  return Buffer.byteLength(text) === text.length ? Buffer.from(text, 'latin1') : Buffer.from(text)
}

/**
 * Write `text` to stdout, as a command's one result: a string, its UTF-8
 * bytes, or bytes in pieces written in order, never gathered (see
 * printedDocument in ./inspect.ts); a piece is valid only until the next is
 * taken, as they may share one buffer. `callback` hears once it was handed
 * to the OS (or why not). Before anything made process.stdout, a
 * synchronous write(2) loop on descriptor 1 (no stream to build); a
 * descriptor that would block (O_NONBLOCK, set by whoever shares it) hands
 * the rest to process.stdout. Failures are the guard's: a closed reader
 * ends quietly, a full disk says so once.
 */
export function writeWhole(text: string | Uint8Array | Iterable<Uint8Array>, callback?: WriteCallback): void {
  const single = typeof text === 'string' || ArrayBuffer.isView(text)
  const pieces = (single ? [text] : text)[Symbol.iterator]()
  if (!direct || failure) {
    toStream(pieces, !single, callback)
    return
  }
  for (let next = pieces.next(); !next.done; next = pieces.next()) {
    const bytes = typeof next.value === 'string' ? encodeUtf8(next.value) : next.value
    let done: number
    try {
      done = writeUntilBlocked(1, bytes)
    } catch (error) {
      pieces.return?.()
      if (!isOutputError(error)) throw error
      outputFailed(error)
      callback?.(error)
      return
    }
    if (done < bytes.length) {
      toStream(pieces, !single, callback, bytes.subarray(done))
      return
    }
  }
  callback?.()
}

/**
 * Hand the pieces left (after `first`, the rest of one) to process.stdout
 * in order; `callback` hears with the last. The stream keeps what it is
 * given until it is written, so pieces that may share a buffer (`copy`) are
 * copied.
 */
function toStream(
  pieces: Iterator<string | Uint8Array>,
  copy: boolean,
  callback?: WriteCallback,
  first?: Uint8Array,
): void {
  const kept = (piece: string | Uint8Array) => (copy && typeof piece !== 'string' ? Buffer.from(piece) : piece)
  const all = first ? [kept(first)] : []
  for (let next = pieces.next(); !next.done; next = pieces.next()) all.push(kept(next.value))
  all.forEach((piece, i) => {
    process.stdout.write(piece, i === all.length - 1 ? callback : undefined)
  })
}

/** Guard one stream (the real process.stdout, or a test's). Idempotent. */
export function guardStream(stream: NodeJS.WriteStream): void {
  if ((stream as {actorsGuarded?: boolean}).actorsGuarded) return
  ;(stream as {actorsGuarded?: boolean}).actorsGuarded = true
  // Pipes report a closed reader asynchronously, as an 'error' event; a failed
  // synchronous write emits one too. This guard is the one listener: oclif's own
  // rethrows anything but EPIPE, which would turn a full disk into a crash.
  stream.removeAllListeners('error')
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (!isOutputError(error)) throw error
    outputFailed(error)
  })
  const write = stream.write
  // Files (and /dev/full) are written synchronously: their errors are thrown by write() itself.
  stream.write = function guardedWrite(this: NodeJS.WriteStream, ...args: unknown[]): boolean {
    const callback = args.find((arg): arg is WriteCallback => typeof arg === 'function')
    if (failure) {
      if (callback) process.nextTick(callback, failure)
      return true
    }
    try {
      return (write as (...a: unknown[]) => boolean).apply(this, args)
    } catch (error) {
      if (!isOutputError(error)) throw error
      outputFailed(error)
      if (callback) process.nextTick(callback, error)
      return true
    }
  } as typeof stream.write
}
