/**
 * The client side of a Run's control endpoint: read `control-endpoint.json`,
 * trust it only when it names the Run's current generation, then send one
 * JSON line over its Unix socket (the line-socket transport) and read one
 * reply line (at most MAX_REPLY_BYTES, at most REQUEST_TIMEOUT_MS).
 */
import {lstatSync} from 'node:fs'
import {basename, dirname, isAbsolute, resolve} from 'node:path'
import {runFile} from '../runs/store.js'
import {readJsonFile} from '../platform/state-files.js'
import {LineSocketError, MAX_REPLY_BYTES, requestLine, socketPathIn} from '../platform/line-socket.js'

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
export {LineSocketError as EndpointError} from '../platform/line-socket.js'

/**
 * The Run's endpoint as written by its service, or undefined when there is
 * none. A file that is damaged or not of the documented shape fails closed
 * (throws, naming the file) rather than being half-trusted.
 */
export function readControlEndpoint(dir: string): ControlEndpoint | undefined {
  const file = runFile(dir, 'endpoint')
  const data = readJsonFile<Record<string, unknown>>(file, {maxBytes: MAX_ENDPOINT_BYTES})
  if (!data) return undefined
  if (
    data.type !== 'unix' ||
    typeof data.path !== 'string' ||
    data.path === '' ||
    typeof data.run_instance_id !== 'string'
  ) {
    throw new LineSocketError(`${file}: expected {path, type: "unix", run_instance_id, ready_at}`, 'protocol')
  }
  requireOwnSocket(file, dir, data.path)
  return data as unknown as ControlEndpoint
}

/**
 * The kernel writes control records only into a socket of the Run's own: a
 * socket file directly in its state dir (or the temp-dir name a state dir
 * too deep for a socket path gets, platform/line-socket.ts socketPathIn),
 * not a link and not a second name of another socket. A Run that named any
 * socket had the kernel write `pause` and `status` into an unrelated
 * listener and print its reply as the Run's. A path with nothing there yet
 * passes: connecting finds nothing, and the kernel may act instead.
 */
function requireOwnSocket(file: string, dir: string, path: string): void {
  const refuse = (why: string): never => {
    throw new LineSocketError(`${file}: path ${JSON.stringify(path)} ${why}`, 'protocol')
  }
  if (!isAbsolute(path) || !isOwnSocketPath(dir, resolve(path))) refuse("is not a socket in the Run's state dir")
  let stat: ReturnType<typeof lstatSync>
  try {
    stat = lstatSync(path)
  } catch {
    return
  }
  if (!stat.isSocket()) refuse('is not a socket (a link or another kind of file)')
  if (stat.nlink !== 1) refuse('is a second name of another socket (a hard link)')
  if (typeof process.getuid === 'function' && stat.uid !== process.getuid()) refuse('belongs to another user')
}

/**
 * Send one request to a Run's endpoint and resolve with the parsed reply.
 * Rejects with an EndpointError: `unreachable` when the socket does not
 * accept (missing, refused: nothing was delivered), `timeout` after
 * `timeoutMs`, `protocol` for an oversized or non-JSON reply.
 */
export function sendControlRequest(
  endpoint: Pick<ControlEndpoint, 'path'>,
  request: ControlRequest,
  timeoutMs = REQUEST_TIMEOUT_MS,
): Promise<ControlReply> {
  return requestJsonReply(endpoint.path, request, timeoutMs)
}

/**
 * One JSON request line to the socket at `path`, one `{ok: true|false, ...}`
 * reply line back (at most 4 KiB): the exchange every endpoint speaks, a
 * Run's and a standalone service's alike.
 */
export async function requestJsonReply(
  path: string,
  request: object,
  timeoutMs = REQUEST_TIMEOUT_MS,
): Promise<ControlReply> {
  const line = await requestLine(path, JSON.stringify(request), {timeoutMs, maxReply: MAX_REPLY_BYTES})
  return parseReply(line, path)
}

function parseReply(text: string, where: string): ControlReply {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    throw new LineSocketError(`reply from ${where} is not JSON: ${text.slice(0, 200)}`, 'protocol')
  }
  if (
    !value ||
    typeof value !== 'object' ||
    Array.isArray(value) ||
    typeof (value as {ok?: unknown}).ok !== 'boolean'
  ) {
    throw new LineSocketError(`reply from ${where} is not {ok: true|false, ...}`, 'protocol')
  }
  const reply = value as ControlReply
  if (!reply.ok && typeof reply.error !== 'string')
    return {...reply, ok: false, error: 'service refused without a reason'}
  return reply
}

/** A path directly in `dir`, or the temp-dir name socketPathIn gives `dir`'s socket NAME (`actors-HASH-NAME`). */
function isOwnSocketPath(dir: string, path: string): boolean {
  if (dirname(path) === resolve(dir)) return true
  const name = /^actors-[0-9a-f]{16}-(.+)$/.exec(basename(path))?.[1]
  return name !== undefined && socketPathIn(dir, name) === path
}
