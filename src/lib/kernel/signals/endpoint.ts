/**
 * The client side of a Run's control endpoint: read `control-endpoint.json`,
 * trust it only when it names the Run's current generation, then send one
 * JSON line over its Unix socket (the line-socket transport) and read one
 * reply line (at most MAX_REPLY_BYTES, at most REQUEST_TIMEOUT_MS).
 */
import {closeSync, constants, fstatSync, lstatSync, openSync, type Stats} from 'node:fs'
import {nodeOs} from '../../base/platform/builtins.js'
import {basename, dirname, isAbsolute, resolve} from 'node:path'
import {runFile} from '../runs/store.js'
import {readJsonFile} from '../../base/platform/state-files.js'
import {O_PATH} from '../../base/platform/private-files.js'
import {testHookPause} from '../../base/platform/test-hooks.js'
import {isTempSocketOf, LineSocketError, MAX_REPLY_BYTES, requestLine} from '../../base/platform/line-socket.js'
import {unprovenRunListener} from './listener-proof.js'

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
export {LineSocketError as EndpointError} from '../../base/platform/line-socket.js'

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
  let stat: Stats
  try {
    stat = lstatSync(path)
  } catch {
    return
  }
  const wrong = notOwnSocket(stat)
  if (wrong) refuse(wrong)
}

/** Why a file is not a socket of the Run's own (the rules above), or undefined when it is one. */
function notOwnSocket(stat: Stats): string | undefined {
  if (!stat.isSocket()) return 'is not a socket (a link or another kind of file)'
  if (stat.nlink !== 1) return 'is a second name of another socket (a hard link)'
  if (typeof process.getuid === 'function' && stat.uid !== process.getuid()) return 'belongs to another user'
  return undefined
}

/**
 * Send one request to a Run's endpoint and resolve with the parsed reply.
 * Rejects with an EndpointError: `unreachable` when the socket does not
 * accept (missing, refused, no socket of the Run's own by the time it is
 * opened, or one whose listener is not proven to be the Run's: nothing was
 * delivered), `timeout` after `timeoutMs`, `protocol` for an oversized or
 * non-JSON reply. `dir`: the Run's state dir, whose unit must hold the
 * listener (signals/listener-proof.ts).
 */
export async function sendControlRequest(
  endpoint: Pick<ControlEndpoint, 'path' | 'pid'>,
  request: ControlRequest,
  dir: string,
  timeoutMs = REQUEST_TIMEOUT_MS,
): Promise<ControlReply> {
  return requestProvenListener(
    endpoint.path,
    request,
    (file) => unprovenRunListener(endpoint.path, file, dir, endpoint.pid),
    timeoutMs,
  )
}

/**
 * One request to the socket at `path`, sent only once `unproven` finds its
 * listener proven (undefined; else the reason, and `unreachable`: nothing was
 * sent). The file is pinned first and proven as pinned (`file`: its stat),
 * so the file proven is the file connected to, whatever is put at the path
 * meanwhile: a Run and a standalone service are proven each their own way
 * (signals/listener-proof.ts).
 */
export async function requestProvenListener(
  path: string,
  request: object,
  unproven: (file: Stats) => string | undefined,
  timeoutMs = REQUEST_TIMEOUT_MS,
): Promise<ControlReply> {
  testHookPause('endpointPinDelayMs', 10_000) // test-only: the moment a Run could swap its socket for another file
  const fd = pinSocket(path)
  const via = `/proc/self/fd/${fd}`
  try {
    const why = unproven(fstatSync(fd))
    if (why) throw new LineSocketError(`${path} ${why}; nothing was sent`, 'unreachable')
    testHookPause('endpointConnectDelayMs', 10_000) // test-only: the moment a Run could swap its socket
    return await requestJsonReply(via, request, timeoutMs)
  } catch (error) {
    if (!(error instanceof LineSocketError)) throw error
    throw new LineSocketError(error.message.replaceAll(via, path), error.kind, error.code)
  } finally {
    closeSync(fd)
  }
}

/**
 * The endpoint's socket, pinned for one request: opened as a place (O_PATH),
 * never through a link in its own place or in its state dir's, and checked on
 * that very inode (requireOwnSocket's rules). The request then connects
 * through /proc/self/fd, so it reaches that socket whatever is put at the
 * path meanwhile: a Run swapping its socket for a link between the check
 * and a connect by name had requests reach an unrelated listener.
 */
function pinSocket(path: string): number {
  // A deep state dir's socket lives in the temp dir (socketPathIn), which is not the Run's to swap for a link.
  const inTemp = dirname(path) === nodeOs().tmpdir() && basename(path).startsWith('actors-')
  const flags = O_PATH | constants.O_NOFOLLOW
  let fd: number
  try {
    const dirFd = openSync(dirname(path), O_PATH | constants.O_DIRECTORY | (inTemp ? 0 : constants.O_NOFOLLOW))
    try {
      fd = openSync(`/proc/self/fd/${dirFd}/${basename(path)}`, flags)
    } finally {
      closeSync(dirFd)
    }
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'ENOENT') throw new LineSocketError(`${path}: ENOENT`, 'unreachable', code)
    throw new LineSocketError(`${path}: its state dir is not a directory of its own (${code})`, 'unreachable', code)
  }
  const wrong = notOwnSocket(fstatSync(fd))
  if (!wrong) return fd
  closeSync(fd)
  // Nothing was sent: unreachable, so a runtime action (stop, pause) is the kernel's, as with no socket at all.
  throw new LineSocketError(`${path} ${wrong}`, 'unreachable')
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

/** A path directly in `dir`, or a temp-dir name socketPathIn gives one of `dir`'s sockets (`actors-HASH-RANDOM-NAME`). */
export function isOwnSocketPath(dir: string, path: string): boolean {
  return dirname(path) === resolve(dir) || isTempSocketOf(resolve(dir), path)
}
