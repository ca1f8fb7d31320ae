/**
 * The one line-socket transport under every Unix-socket endpoint (a Run's
 * control endpoint, a standalone service's endpoint): a client connects,
 * sends one line, reads one line back, and the server closes. Both sides
 * bound what they read, so neither a chatty client nor a broken service can
 * make the other buffer without limit. What the lines mean (JSON requests and
 * `{ok, ...}` replies) is the caller's business.
 */
import {lstatSync, unlinkSync} from 'node:fs'
import {makeSocketPrivate} from './private-files.js'
import type {Server, Socket} from 'node:net'
import {join} from 'node:path'
import {nodeCrypto, nodeNet, nodeOs} from './builtins.js'
import {writeUntilBlocked} from './write-fd.js'

/** Replies are one line of at most this many bytes, everywhere (SPEC: Control, Music). */
export const MAX_REPLY_BYTES = 4096
/** Request lines are bounded too: a 4 KiB value may grow sixfold when JSON-escaped, plus the envelope. */
export const MAX_REQUEST_BYTES = 64 * 1024
/** A client that connects and says nothing is dropped after this long. */
const IDLE_TIMEOUT_MS = 10_000
/** On close: how long in-flight handlers may finish, then how long their replies may flush. */
const CLOSE_HANDLERS_MS = 2000
const CLOSE_FLUSH_MS = 500

/** Unix socket paths are limited to ~104-108 bytes; longer ones move to the temp dir. */
const MAX_SOCKET_PATH = 100

/**
 * A socket path inside `dir`, or, when `dir` is too deep for a socket name, a
 * short one in the temp dir: `actors-HASH-RANDOM-NAME`, HASH naming the path
 * in `dir` it stands for and RANDOM fresh for every call. The temp dir is
 * everyone's: a stable name there could be bound by any local process before
 * the service, which then received its requests (issue 35); a random one
 * cannot be foreseen. The server publishes the name it got (its endpoint
 * file); a client checks it with isTempSocketOf and, for a Run, proves who
 * listens on it (signals/listener-proof.ts).
 */
export function socketPathIn(dir: string, name: string): string {
  const inside = join(dir, name)
  if (Buffer.byteLength(inside) <= MAX_SOCKET_PATH) return inside
  const random = nodeCrypto().randomBytes(8).toString('hex')
  return join(nodeOs().tmpdir(), `actors-${pathHash(inside)}-${random}-${name}`)
}

function pathHash(path: string): string {
  return nodeCrypto().createHash('sha256').update(path).digest('hex').slice(0, 16)
}

/**
 * Whether `path` is a temp-dir name socketPathIn gives a socket of `dir`:
 * `actors-HASH-RANDOM-NAME`, or the stable `actors-HASH-NAME` of earlier
 * versions, HASH naming `dir/NAME`.
 */
export function isTempSocketOf(dir: string, path: string): boolean {
  const at = path.lastIndexOf('/')
  if (at < 0 || path.slice(0, at) !== nodeOs().tmpdir()) return false
  const match = /^actors-([0-9a-f]{16})-(.+)$/.exec(path.slice(at + 1))
  if (!match) return false
  const [, hash, rest] = match
  if (pathHash(join(dir, rest)) === hash) return true
  const named = /^[0-9a-f]{16}-(.+)$/.exec(rest)?.[1]
  return named !== undefined && pathHash(join(dir, named)) === hash
}

/** Errors that mean the server is not there: nothing was delivered, so a caller may safely do something else. */
const UNREACHABLE_CODES = ['ENOENT', 'ECONNREFUSED', 'ENOTSOCK', 'EACCES', 'ENOTDIR', 'EINVAL', 'ENAMETOOLONG']

/**
 * Why a request got no reply line. `unreachable`: the socket did not accept
 * (missing, refused: nothing was delivered); `timeout`: connected but no
 * reply in time (the request may have been acted on); `protocol`: the peer
 * broke the framing (reply over the bound, no reply at all, a mid-exchange
 * socket error).
 */
export class LineSocketError extends Error {
  constructor(
    message: string,
    readonly kind: 'unreachable' | 'timeout' | 'protocol',
    /** The system error code, when a socket error caused it. */
    readonly code?: string,
  ) {
    super(message)
  }
}

export interface RequestLineOptions {
  timeoutMs: number
  /** Longest reply line accepted (default MAX_REPLY_BYTES); a longer one is refused, not read on. */
  maxReply?: number
}

/**
 * Send `request` (one line; the newline is added) to the Unix socket at
 * `path` and resolve with the reply line, without its newline. A peer that
 * closes without a newline has its bytes taken as the reply (a reply line is
 * the last thing a server writes); one that closes having sent nothing is a
 * protocol error. Rejects with LineSocketError.
 */
export function requestLine(path: string, request: string, options: RequestLineOptions): Promise<string> {
  const maxReply = options.maxReply ?? MAX_REPLY_BYTES
  return new Promise((resolve, reject) => {
    let settled = false
    let connected = false
    let buffer = Buffer.alloc(0)
    const socket = nodeNet().createConnection({path})
    const finish = (error: LineSocketError | undefined, line?: string) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      socket.destroy()
      if (error) reject(error)
      else resolve(line!)
    }
    const timer = setTimeout(
      () =>
        finish(
          new LineSocketError(
            `no reply from ${path} within ${options.timeoutMs}ms`,
            connected ? 'timeout' : 'unreachable',
          ),
        ),
      options.timeoutMs,
    )
    socket.on('connect', () => {
      connected = true
      sendRequest(socket, request + '\n')
    })
    socket.on('data', (chunk: Buffer) => {
      buffer = Buffer.concat([buffer, chunk])
      const newline = buffer.indexOf(10)
      const line = newline >= 0 ? buffer.subarray(0, newline) : buffer
      if (line.length > maxReply) {
        finish(new LineSocketError(`${path}: reply over ${maxReply} bytes`, 'protocol'))
        return
      }
      if (newline >= 0) finish(undefined, line.toString('utf8'))
    })
    socket.on('end', () => {
      if (buffer.length > 0) finish(undefined, buffer.toString('utf8'))
      else finish(new LineSocketError(`${path} closed the connection without a reply`, 'protocol'))
    })
    socket.on('error', (error: NodeJS.ErrnoException) => {
      const unreachable = !connected && UNREACHABLE_CODES.includes(error.code ?? '')
      finish(
        new LineSocketError(
          `${path}: ${error.code ?? error.message}`,
          unreachable ? 'unreachable' : 'protocol',
          error.code,
        ),
      )
    })
  })
}

/**
 * Write the request line without letting a failed write end the exchange. A
 * server may answer before it reads (a one-shot service that writes its reply
 * and closes): the reply is already here, but a socket.write that meets EPIPE
 * destroys the socket and the reply with it. write(2) on the descriptor
 * reports that failure to us alone, and the reply is read as usual; what
 * would block goes through socket.write.
 */
function sendRequest(socket: Socket, line: string): void {
  const fd = (socket as unknown as {_handle?: {fd?: number}})._handle?.fd
  if (typeof fd !== 'number' || fd < 0) {
    socket.write(line)
    return
  }
  const bytes = Buffer.from(line)
  let sent: number
  try {
    sent = writeUntilBlocked(fd, bytes)
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    // The server stopped reading: its reply, if it sent one, is read as usual.
    if (code !== 'EPIPE' && code !== 'ECONNRESET') socket.destroy(error as Error)
    return
  }
  if (sent < bytes.length) socket.write(bytes.subarray(sent))
}

/** How a server words a refusal it makes itself (a request or reply over its bound, a handler that threw). */
export type RefusalLine = (message: string, reason: 'too-large' | 'failed') => string

export interface ServeLinesOptions {
  /** Longest request line accepted (default MAX_REQUEST_BYTES); a longer one is refused without calling the handler. */
  maxLine?: number
  /** Longest reply line sent (default MAX_REPLY_BYTES); a handler's longer reply is replaced by a refusal. */
  maxReply?: number
  /** The refusal line; default `{"ok": false, "error": message}`. */
  refuse?: RefusalLine
}

export interface LineServer {
  path: string
  /** Stop accepting, let in-flight replies finish and flush, drop idle clients, remove the socket. */
  close(): Promise<void>
}

const defaultRefusal: RefusalLine = (message) => JSON.stringify({ok: false, error: message})

/**
 * Remove a leftover socket file at `path` (a server that died without
 * cleaning up); refuse to touch anything that is not a socket.
 */
export function removeStaleSocket(path: string): void {
  let isSocket: boolean
  try {
    isSocket = lstatSync(path).isSocket()
  } catch {
    return
  }
  if (!isSocket) throw new Error(`${path} exists and is not a socket; refusing to replace it`)
  unlinkSync(path)
}

/** Listen on `path` (replacing a stale socket file) and make the socket 0600; resolves once it accepts. */
async function listenPrivately(server: Server, path: string): Promise<void> {
  removeStaleSocket(path)
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(path, () => {
      server.off('error', reject)
      // listen() made the socket under the umask: 0600 whatever it is (its dir is 0700 too).
      try {
        makeSocketPrivate(path)
      } catch (error) {
        server.close()
        reject(error)
        return
      }
      resolve()
    })
  })
}

/**
 * Listen on `path` (replacing a stale socket file) and answer one line per
 * connection with `handle`'s line. A client that closes mid-line, or says
 * nothing for 10 s, is dropped without calling the handler. Resolves once the
 * socket accepts. Handlers may run concurrently: callers that need order
 * serialise inside the handler.
 */
export async function serveLines(
  path: string,
  handle: (line: string) => Promise<string>,
  options: ServeLinesOptions = {},
): Promise<LineServer> {
  const maxLine = options.maxLine ?? MAX_REQUEST_BYTES
  const maxReply = options.maxReply ?? MAX_REPLY_BYTES
  const refuse = options.refuse ?? defaultRefusal
  const connections = new Set<Socket>()
  const inFlight = new Set<Promise<void>>()

  const reply = async (line: string): Promise<string> => {
    let answer: string
    try {
      answer = await handle(line)
    } catch (error) {
      return refuse(error instanceof Error ? error.message : String(error), 'failed')
    }
    return Buffer.byteLength(answer) > maxReply ? refuse(`reply over ${maxReply} bytes`, 'too-large') : answer
  }

  const server: Server = nodeNet().createServer((socket) => {
    connections.add(socket)
    socket.on('close', () => connections.delete(socket))
    socket.on('error', () => {})
    socket.setTimeout(IDLE_TIMEOUT_MS, () => socket.destroy())
    let buffer = Buffer.alloc(0)
    let answered = false
    socket.on('data', (chunk: Buffer) => {
      if (answered) return
      buffer = Buffer.concat([buffer, chunk])
      const newline = buffer.indexOf(10)
      if (newline < 0 ? buffer.length > maxLine : newline > maxLine) {
        answered = true
        socket.end(refuse(`request over ${maxLine} bytes`, 'too-large') + '\n')
        return
      }
      if (newline < 0) return
      answered = true
      const work = reply(buffer.subarray(0, newline).toString('utf8')).then((line) => {
        if (!socket.destroyed) socket.end(line + '\n')
      })
      inFlight.add(work)
      void work.finally(() => inFlight.delete(work))
    })
  })

  await listenPrivately(server, path)

  let closing: Promise<void> | undefined
  const within = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms).unref())
  return {
    path,
    close() {
      closing ??= (async () => {
        const closed = new Promise<void>((resolve) => server.close(() => resolve()))
        await Promise.race([Promise.all(inFlight), within(CLOSE_HANDLERS_MS)])
        // Replies were handed to socket.end(); give them a moment to flush before cutting idle clients.
        const flushed = [...connections].map((socket) => new Promise((resolve) => socket.once('close', resolve)))
        await Promise.race([Promise.all(flushed), within(CLOSE_FLUSH_MS)])
        for (const socket of connections) socket.destroy()
        await closed
        try {
          unlinkSync(path)
        } catch {}
      })()
      return closing
    },
  }
}
