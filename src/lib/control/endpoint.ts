/**
 * The client side of a Run's control endpoint: read `control-endpoint.json`,
 * trust it only when it names the Run's current generation, then send one
 * JSON line over its Unix socket and read one reply line (at most
 * MAX_REPLY_BYTES, at most REQUEST_TIMEOUT_MS).
 */
import {nodeNet} from '../builtins.js'
import {runFile} from '../run-store.js'
import {readJsonFile} from '../state-files.js'
import {MAX_REPLY_BYTES} from './journal.js'

export const REQUEST_TIMEOUT_MS = 5000
/** Largest control-endpoint.json we read: it holds a path and three short fields. */
const MAX_ENDPOINT_BYTES = 16 * 1024

export interface ControlEndpoint {
  path: string
  type: 'unix'
  run_instance_id: string
  ready_at: string
  pid?: number
}

/** The request line a service receives. */
export interface ControlRequest {
  id: string
  run_instance_id: string
  action: string
  input?: string
}

export type ControlReply = {ok: true; [key: string]: unknown} | {ok: false; error: string; [key: string]: unknown}

/** Why a request got no reply; `unreachable` means nothing was delivered (safe to fall back). */
export class EndpointError extends Error {
  constructor(
    message: string,
    readonly kind: 'unreachable' | 'timeout' | 'protocol',
  ) {
    super(message)
  }
}

/**
 * The Run's endpoint as written by its service, or undefined when there is
 * none. A file that is damaged or not of the documented shape fails closed
 * (throws, naming the file) rather than being half-trusted.
 */
export function readControlEndpoint(dir: string): ControlEndpoint | undefined {
  const file = runFile(dir, 'endpoint')
  const data = readJsonFile<Record<string, unknown>>(file, {maxBytes: MAX_ENDPOINT_BYTES})
  if (!data) return undefined
  if (data.type !== 'unix' || typeof data.path !== 'string' || data.path === '' || typeof data.run_instance_id !== 'string') {
    throw new EndpointError(`${file}: expected {path, type: "unix", run_instance_id, ready_at}`, 'protocol')
  }
  return data as unknown as ControlEndpoint
}

/**
 * Send one request and resolve with the parsed reply. Rejects with an
 * EndpointError: `unreachable` when the socket does not accept (missing,
 * refused: nothing was delivered), `timeout` after `timeoutMs`, `protocol`
 * for an oversized or non-JSON reply.
 */
export function sendControlRequest(endpoint: ControlEndpoint, request: ControlRequest, timeoutMs = REQUEST_TIMEOUT_MS): Promise<ControlReply> {
  return new Promise((resolve, reject) => {
    let settled = false
    let connected = false
    let buffer = Buffer.alloc(0)
    const socket = nodeNet().createConnection({path: endpoint.path})
    const finish = (error: EndpointError | undefined, reply?: ControlReply) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      socket.destroy()
      if (error) reject(error)
      else resolve(reply!)
    }
    const settleWith = (text: string) => {
      let reply: ControlReply
      try {
        reply = parseReply(text, endpoint.path)
      } catch (error) {
        finish(error as EndpointError)
        return
      }
      finish(undefined, reply)
    }
    const timer = setTimeout(
      () => finish(new EndpointError(`no reply from ${endpoint.path} within ${timeoutMs}ms`, connected ? 'timeout' : 'unreachable')),
      timeoutMs,
    )
    socket.on('connect', () => {
      connected = true
      socket.write(JSON.stringify(request) + '\n')
    })
    socket.on('data', (chunk: Buffer) => {
      buffer = Buffer.concat([buffer, chunk])
      const newline = buffer.indexOf(10)
      const line = newline >= 0 ? buffer.subarray(0, newline) : buffer
      if (line.length > MAX_REPLY_BYTES) {
        finish(new EndpointError(`reply from ${endpoint.path} is over ${MAX_REPLY_BYTES} bytes`, 'protocol'))
        return
      }
      if (newline < 0) return
      settleWith(line.toString('utf8'))
    })
    socket.on('end', () => {
      if (buffer.length > 0 && buffer.indexOf(10) < 0) settleWith(buffer.toString('utf8'))
      else finish(new EndpointError(`${endpoint.path} closed the connection without a reply`, 'protocol'))
    })
    socket.on('error', (error: NodeJS.ErrnoException) => {
      const unreachable = !connected && ['ENOENT', 'ECONNREFUSED', 'ENOTSOCK', 'EACCES', 'ENOTDIR', 'EINVAL', 'ENAMETOOLONG'].includes(error.code ?? '')
      finish(new EndpointError(`${endpoint.path}: ${error.code ?? error.message}`, unreachable ? 'unreachable' : 'protocol'))
    })
  })
}

function parseReply(text: string, where: string): ControlReply {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    throw new EndpointError(`reply from ${where} is not JSON`, 'protocol')
  }
  if (!value || typeof value !== 'object' || Array.isArray(value) || typeof (value as {ok?: unknown}).ok !== 'boolean') {
    throw new EndpointError(`reply from ${where} is not {ok: true|false, ...}`, 'protocol')
  }
  const reply = value as ControlReply
  if (!reply.ok && typeof reply.error !== 'string') return {...reply, ok: false, error: 'service refused without a reason'}
  return reply
}
