/**
 * The server side for Node services: serve a Run's declared actions on a Unix
 * socket in its state dir. `serveControlEndpoint` listens, then publishes
 * `control-endpoint.json` atomically (so a client never finds an endpoint
 * that is not yet accepting), answers one JSON line per connection, keeps
 * the Run's control journal in step (claimed → handled/failed) and removes
 * the socket and the endpoint file when closed or when the process exits.
 *
 * Built separately as dist/service.js so a service can import it without
 * loading the CLI:  import {serveControlEndpoint} from 'actors/dist/service.js'
 * (which also exports the polling API: listQueuedControls, claimControl,
 * completeControl).
 */
import {nodeCrypto, nodeNet} from '../builtins.js'
import {lstatSync, readFileSync, unlinkSync} from 'node:fs'
import type {Server, Socket} from 'node:net'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {runFile} from '../run-store.js'
import {writeJsonAtomic} from '../state-files.js'
import type {ControlReply, ControlRequest} from './endpoint.js'
import {boundedReply, claimControl, completeControl, readControlRecord, type ControlRecord} from './journal.js'

// Services that poll instead of serving a socket use the journal API directly.
export {claimControl, completeControl, listQueuedControls, readControlRecords} from './journal.js'
export type {ControlRecord, ControlStatus} from './journal.js'

/** Largest request line accepted: a 4 KiB input may grow when JSON-escaped. */
const MAX_REQUEST_BYTES = 64 * 1024
/** A client that connects and says nothing is dropped after this long. */
const IDLE_TIMEOUT_MS = 10_000
/** Unix socket paths are limited to ~108 bytes; longer state dirs get a socket in the temp dir. */
const MAX_SOCKET_PATH = 100

/** What a handler receives: the request, and its journal record when it has one. */
export interface ControlRequestContext extends ControlRequest {
  record?: ControlRecord
}

/**
 * A handler returns the reply's fields (sent as `{ok: true, ...fields}`), or an
 * explicit `{ok: false, error}`; throwing replies `{ok: false, error: message}`.
 */
export type ControlHandler = (request: ControlRequestContext) => unknown | Promise<unknown>

export interface ServeControlOptions {
  /** The Run's state dir; default `$ACTORS_STATE_DIR`. */
  stateDir?: string
  /** The Run's generation; default `$ACTORS_RUN_INSTANCE`. Requests for any other are refused. */
  runInstanceId?: string
  handle: ControlHandler
  /** Override the socket location (default: `control.sock` in the state dir). */
  socketPath?: string
  /** Clean up on SIGTERM/SIGINT/SIGHUP when nothing else handles them (default true). */
  handleSignals?: boolean
}

export interface ControlEndpointServer {
  path: string
  endpointFile: string
  runInstanceId: string
  /** Stop accepting, remove the socket and (if still ours) control-endpoint.json. */
  close(): Promise<void>
}

/** Where the socket goes: in the state dir, unless that path is too long for a Unix socket. */
export function controlSocketPath(stateDir: string, runInstanceId: string): string {
  const inDir = join(stateDir, 'control.sock')
  if (Buffer.byteLength(inDir) <= MAX_SOCKET_PATH) return inDir
  const hash = nodeCrypto().createHash('sha256').update(`${stateDir}\0${runInstanceId}`).digest('hex').slice(0, 20)
  return join(tmpdir(), `actors-control-${hash}.sock`)
}

/** Remove a leftover socket at `path`; refuse to touch anything that is not a socket. */
function removeStaleSocket(path: string): void {
  let isSocket: boolean
  try {
    isSocket = lstatSync(path).isSocket()
  } catch {
    return
  }
  if (!isSocket) throw new Error(`${path} exists and is not a socket; refusing to replace it`)
  unlinkSync(path)
}

/** Turn whatever the handler produced into the one reply line. */
async function runHandler(handle: ControlHandler, request: ControlRequestContext): Promise<ControlReply> {
  try {
    const value = await handle(request)
    if (value && typeof value === 'object' && !Array.isArray(value) && (value as {ok?: unknown}).ok === false) {
      const error = (value as {error?: unknown}).error
      return {...(value as object), ok: false, error: typeof error === 'string' ? error : 'refused'}
    }
    const fields = value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : value === undefined ? {} : {value}
    return {...fields, ok: true}
  } catch (error) {
    return {ok: false, error: error instanceof Error ? error.message : String(error)}
  }
}

/**
 * Serve the Run's declared actions until closed. Handlers run one at a time,
 * in arrival order, so a service never sees two controls interleave. Resolves
 * once the socket accepts and control-endpoint.json is published.
 */
export async function serveControlEndpoint(options: ServeControlOptions): Promise<ControlEndpointServer> {
  const stateDir = options.stateDir ?? process.env.ACTORS_STATE_DIR
  const runInstanceId = options.runInstanceId ?? process.env.ACTORS_RUN_INSTANCE
  if (!stateDir || !runInstanceId) {
    throw new Error('serveControlEndpoint needs stateDir and runInstanceId (or ACTORS_STATE_DIR and ACTORS_RUN_INSTANCE from a Run)')
  }
  const path = options.socketPath ?? controlSocketPath(stateDir, runInstanceId)
  const endpointFile = runFile(stateDir, 'endpoint')
  removeStaleSocket(path)

  let chain: Promise<unknown> = Promise.resolve()
  const serialised = (task: () => Promise<ControlReply>): Promise<ControlReply> => {
    const next = chain.then(task, task)
    chain = next.catch(() => undefined)
    return next
  }

  const answer = async (line: string): Promise<ControlReply> => {
    let request: ControlRequest
    try {
      request = JSON.parse(line)
    } catch {
      return {ok: false, error: 'request is not JSON'}
    }
    if (!request || typeof request !== 'object' || typeof request.action !== 'string') return {ok: false, error: 'request has no action'}
    if (request.run_instance_id !== runInstanceId) {
      return {ok: false, error: `stale generation: this service serves ${runInstanceId}, not ${String(request.run_instance_id)}`}
    }
    let record: ControlRecord | undefined
    if (typeof request.id === 'string') {
      const existing = readControlRecord(stateDir, request.id)
      if (existing) {
        record = claimControl(stateDir, request.id, 'queued', runInstanceId)
        if (!record) return {ok: false, error: `control ${request.id} is already ${readControlRecord(stateDir, request.id)?.status ?? 'gone'}`}
      }
    }
    let reply = await serialised(() => runHandler(options.handle, {...request, ...(record ? {record} : {})}))
    const bounded = boundedReply(reply)
    if (bounded.error) reply = {ok: false, error: bounded.error}
    if (record) {
      if (reply.ok) completeControl(stateDir, record.id, 'handled', {reply})
      else completeControl(stateDir, record.id, 'failed', {reply, error: reply.error})
    }
    return reply
  }

  const onConnection = (socket: Socket) => {
    let buffer = Buffer.alloc(0)
    let answered = false
    socket.setTimeout(IDLE_TIMEOUT_MS, () => socket.destroy())
    socket.on('error', () => {})
    const respond = (reply: ControlReply) => {
      answered = true
      socket.end(JSON.stringify(reply) + '\n')
    }
    socket.on('data', (chunk: Buffer) => {
      if (answered) return
      buffer = Buffer.concat([buffer, chunk])
      const newline = buffer.indexOf(10)
      if (newline < 0) {
        if (buffer.length > MAX_REQUEST_BYTES) respond({ok: false, error: `request is over ${MAX_REQUEST_BYTES} bytes`})
        return
      }
      answered = true
      answer(buffer.subarray(0, newline).toString('utf8')).then(
        (reply) => socket.end(JSON.stringify(reply) + '\n'),
        (error: Error) => socket.end(JSON.stringify({ok: false, error: error.message}) + '\n'),
      )
    })
  }

  const server: Server = nodeNet().createServer(onConnection)
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(path, () => {
      server.off('error', reject)
      resolve()
    })
  })
  writeJsonAtomic(endpointFile, {path, type: 'unix', run_instance_id: runInstanceId, ready_at: new Date().toISOString(), pid: process.pid})

  let closed = false
  const cleanupSync = () => {
    if (closed) return
    closed = true
    try {
      unlinkSync(path)
    } catch {}
    // Only remove the endpoint file if it is still ours (a newer generation may have replaced it).
    try {
      const current = JSON.parse(readFileSync(endpointFile, 'utf8'))
      if (current.run_instance_id === runInstanceId && current.path === path) unlinkSync(endpointFile)
    } catch {}
  }
  const signals: NodeJS.Signals[] = options.handleSignals === false ? [] : ['SIGTERM', 'SIGINT', 'SIGHUP']
  const onSignal = (signal: NodeJS.Signals) => {
    cleanupSync()
    // Nobody else handles it: die of the signal as we would have without us.
    if (process.listenerCount(signal) === 0) process.kill(process.pid, signal)
  }
  const armed = signals.filter((s) => process.listenerCount(s) === 0)
  for (const signal of armed) process.once(signal, onSignal)
  process.once('exit', cleanupSync)

  return {
    path,
    endpointFile,
    runInstanceId,
    close: async () => {
      for (const signal of armed) process.off(signal, onSignal)
      process.off('exit', cleanupSync)
      await new Promise<void>((resolve) => server.close(() => resolve()))
      cleanupSync()
    },
  }
}
