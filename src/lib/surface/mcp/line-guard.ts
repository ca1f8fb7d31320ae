/**
 * The line-level guard in front of the MCP server's stdin (SPEC: Authority
 * over files and Runs, `actors mcp`): the SDK's stdio transport skips a line
 * that is not JSON and drops one that is not a JSON-RPC message without a
 * word, gathers a long line by concatenating every chunk (quadratic), and
 * closes the session when a line passes 10 MiB. This stream sits between
 * stdin and whatever reads the session (the SDK's transport), and:
 *  - splits lines in linear time (the pieces of a line are joined once);
 *  - refuses a line over 4 MiB as it arrives: its bytes are dropped, not
 *    kept, and one JSON-RPC error (-32600, id null) says so;
 *  - answers a line that is not JSON with -32700 (parse error), and one that
 *    is not a JSON-RPC request, notification or response with -32600, and
 *    passes neither on;
 *  - passes every other line on unchanged, one line per chunk.
 * Node built-ins only, and no stream of its own: it runs before the SDK has loaded.
 */
import {EventEmitter} from 'node:events'

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

/**
 * Emit 'error' only to whoever listens: an EventEmitter throws an 'error'
 * nobody listens to, and a client that closed its pipe before the server
 * listened must not crash it with a stack trace (what failed stays failed).
 */
export function emitErrorIfHeard(emitter: EventEmitter, error: Error): void {
  if (emitter.listenerCount('error') > 0) emitter.emit('error', error)
}

/** The longest line the server reads. */
export const MAX_LINE_BYTES = 4 * 1024 * 1024

export const PARSE_ERROR = -32700
export const INVALID_REQUEST = -32600

type Id = string | number | null

/** One JSON-RPC error response line, with the CLI's error shape in `data`. */
export function errorLine(id: Id, code: number, message: string, fix: string): string {
  return JSON.stringify({jsonrpc: '2.0', id, error: {code, message, data: {error: {message, exit_code: 2, fix}}}})
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)
const isId = (value: unknown): value is string | number =>
  typeof value === 'string' || (typeof value === 'number' && Number.isSafeInteger(value))

/** Why `message` is not a JSON-RPC 2.0 message the server can take, or undefined when it is one. */
export function invalidMessage(message: unknown): string | undefined {
  if (!isObject(message)) return 'a JSON-RPC message is one JSON object (batches are not taken)'
  if (message.jsonrpc !== '2.0') return 'the message lacks "jsonrpc": "2.0"'
  if ('id' in message && !isId(message.id)) return '"id" must be a string or an integer'
  if ('method' in message) {
    if (typeof message.method !== 'string' || message.method === '') return '"method" must be a non-empty string'
    if ('params' in message && !isObject(message.params)) return '"params" must be an object'
    return undefined
  }
  if (!isId(message.id)) return 'a response needs an "id"'
  if (!('result' in message) && !isObject(message.error))
    return 'a message needs "method" (a request or notification) or "result"/"error" (a response)'
  return undefined
}

/** The id of a request that failed validation, when it has a usable one (else null, as JSON-RPC says). */
function idOf(message: unknown): Id {
  return isObject(message) && isId(message.id) ? message.id : null
}

/**
 * A stream of the lines of `input` the server may read (see above). `reply`
 * sends one error line to the client; `note` says on stderr what was refused.
 */
export function guardMcpLines(
  input: ByteSource,
  reply: (line: string) => void,
  note: (text: string) => void = () => {},
): ByteSource {
  return new GuardedLines(input, reply, note)
}

/** The lines that passed, one per 'data' event; end, close, error and pause are the input's. */
class GuardedLines extends EventEmitter implements ByteSource {
  private pieces: Buffer[] = []
  private pending = 0
  private skipping = false
  private flowing = false

  constructor(
    private readonly input: ByteSource,
    private readonly reply: (line: string) => void,
    private readonly note: (text: string) => void,
  ) {
    super()
    // The input flows once someone reads the lines (as a piped stream would).
    this.on('newListener', (event: string) => {
      if (event !== 'data' || this.flowing) return
      this.flowing = true
      input.on('data', (chunk) => this.take(chunk))
    })
    // A last line without its newline is not a message yet: the SDK would not read it either.
    input.on('end', () => this.emit('end'))
    input.on('close', () => this.emit('close'))
    input.on('error', (error) => emitErrorIfHeard(this, error))
  }

  get readableEnded(): boolean {
    return this.input.readableEnded
  }

  get destroyed(): boolean {
    return this.input.destroyed
  }

  pause(): this {
    this.input.pause()
    return this
  }

  private take(chunk: Buffer): void {
    let start = 0
    for (let newline = chunk.indexOf(10, start); ; newline = chunk.indexOf(10, start)) {
      const end = newline === -1 ? chunk.length : newline
      if (!this.skipping) {
        const piece = chunk.subarray(start, end)
        if (this.pending + piece.length > MAX_LINE_BYTES) {
          this.skipping = true
          this.pieces = []
          this.pending = 0
          this.refuseLong()
        } else if (piece.length > 0) {
          // Copied: the chunk's buffer may be reused by the reader once this returns.
          this.pieces.push(Buffer.from(piece))
          this.pending += piece.length
        }
      }
      if (newline === -1) break
      if (!this.skipping) {
        const line = this.pieces.length === 1 ? this.pieces[0] : Buffer.concat(this.pieces, this.pending)
        const passed = checkedLine(line, this.reply)
        if (passed) this.emit('data', passed)
      }
      this.pieces = []
      this.pending = 0
      this.skipping = false
      start = newline + 1
    }
  }

  private refuseLong(): void {
    this.reply(
      errorLine(
        null,
        INVALID_REQUEST,
        `request line over ${MAX_LINE_BYTES} bytes refused and skipped`,
        'send smaller requests: page logs with offset and limit_bytes, pass big inputs as files',
      ),
    )
    this.note(`actors mcp: refused a request line over ${MAX_LINE_BYTES} bytes (skipped to its end)\n`)
  }
}

/** One whole line (without its newline): the line to pass on, with its newline; undefined when answered with an error (or blank). */
function checkedLine(line: Buffer, reply: (line: string) => void): Buffer | undefined {
  const text = line.toString('utf8').replace(/\r$/, '')
  if (text.trim() === '') return undefined
  let message: unknown
  try {
    message = JSON.parse(text)
  } catch {
    reply(errorLine(null, PARSE_ERROR, 'parse error: the line is not JSON', 'send one JSON-RPC message per line'))
    return undefined
  }
  const invalid = invalidMessage(message)
  if (invalid) {
    reply(
      errorLine(
        idOf(message),
        INVALID_REQUEST,
        `invalid request: ${invalid}`,
        'send JSON-RPC 2.0: {"jsonrpc": "2.0", "id": 1, "method": "...", "params": {...}}',
      ),
    )
    return undefined
  }
  return Buffer.concat([line, Buffer.from('\n')])
}
