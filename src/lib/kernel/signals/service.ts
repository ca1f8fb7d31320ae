/**
 * The server side for Node services: serve a Run's declared actions on a Unix
 * socket in its state dir (over the line-socket transport). `serveControlEndpoint` listens, then publishes
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
import {unlinkSync} from 'node:fs'
import {runFile} from '../runs/store.js'
import {readJsonFile, writeJsonAtomic} from '../../base/platform/state-files.js'
import type {ControlReply, ControlRequest} from './endpoint.js'
import {boundedReply, claimControl, completeControl, readControlRecord, type ControlRecord} from './journal.js'
import {serveLines, socketPathIn} from '../../base/platform/line-socket.js'

// Services that poll instead of serving a socket use the journal API directly.
export {claimControl, completeControl, listQueuedControls, readControlRecords} from './journal.js'
export type {ControlRecord, ControlStatus} from './journal.js'

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

/** Where the socket goes: `control.sock` in the state dir, unless that path is too long for a Unix socket. */
export function controlSocketPath(stateDir: string): string {
  return socketPathIn(stateDir, 'control.sock')
}

/** Turn whatever the handler produced into the one reply line. */
async function runHandler(handle: ControlHandler, request: ControlRequestContext): Promise<ControlReply> {
  try {
    const value = await handle(request)
    if (value && typeof value === 'object' && !Array.isArray(value) && (value as {ok?: unknown}).ok === false) {
      const error = (value as {error?: unknown}).error
      return {...(value as object), ok: false, error: typeof error === 'string' ? error : 'refused'}
    }
    const fields =
      value && typeof value === 'object' && !Array.isArray(value)
        ? (value as Record<string, unknown>)
        : value === undefined
          ? {}
          : {value}
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
    throw new Error(
      'serveControlEndpoint needs stateDir and runInstanceId (or ACTORS_STATE_DIR and ACTORS_RUN_INSTANCE from a Run)',
    )
  }
  const path = options.socketPath ?? controlSocketPath(stateDir)
  const endpointFile = runFile(stateDir, 'endpoint')

  const answer = requestAnswerer(stateDir, runInstanceId, options.handle)
  const server = await serveLines(path, async (line) => JSON.stringify(await answer(line)))
  writeJsonAtomic(endpointFile, {
    path,
    type: 'unix',
    run_instance_id: runInstanceId,
    ready_at: new Date().toISOString(),
    pid: process.pid,
  })

  const cleanup = cleanupOnExit(path, endpointFile, runInstanceId, options.handleSignals !== false)

  return {
    path,
    endpointFile,
    runInstanceId,
    close: async () => {
      cleanup.disarm()
      await server.close()
      cleanup.now()
    },
  }
}

/**
 * The answer to one request line: checked (JSON, an action, this generation),
 * its journal record claimed, the handler run (one at a time, in arrival
 * order), the reply bounded, and the record completed.
 */
function requestAnswerer(
  stateDir: string,
  runInstanceId: string,
  handle: ControlHandler,
): (line: string) => Promise<ControlReply> {
  let chain: Promise<unknown> = Promise.resolve()
  const serialised = (task: () => Promise<ControlReply>): Promise<ControlReply> => {
    const next = chain.then(task, task)
    chain = next.catch(() => undefined)
    return next
  }
  return async (line: string): Promise<ControlReply> => {
    let request: ControlRequest
    try {
      request = JSON.parse(line)
    } catch {
      return {ok: false, error: 'request is not JSON'}
    }
    if (!request || typeof request !== 'object' || typeof request.action !== 'string')
      return {ok: false, error: 'request has no action'}
    if (request.run_instance_id !== runInstanceId) {
      return {
        ok: false,
        error: `stale generation: this service serves ${runInstanceId}, not ${String(request.run_instance_id)}`,
      }
    }
    let record: ControlRecord | undefined
    if (typeof request.id === 'string') {
      const existing = readControlRecord(stateDir, request.id)
      if (existing) {
        record = claimControl(stateDir, request.id, 'queued', runInstanceId)
        if (!record)
          return {
            ok: false,
            error: `control ${request.id} is already ${readControlRecord(stateDir, request.id)?.status ?? 'gone'}`,
          }
      }
    }
    let reply = await serialised(() => runHandler(handle, {...request, ...(record ? {record} : {})}))
    const bounded = boundedReply(reply)
    if (bounded.error) reply = {ok: false, error: bounded.error}
    if (record) {
      if (reply.ok) completeControl(stateDir, record.id, 'handled', {reply})
      else completeControl(stateDir, record.id, 'failed', {reply, error: reply.error})
    }
    return reply
  }
}

/**
 * Remove the socket and our control-endpoint.json when the process exits or
 * dies of a signal nobody else handles (`now` removes them at once, `disarm`
 * drops the handlers).
 */
function cleanupOnExit(
  path: string,
  endpointFile: string,
  runInstanceId: string,
  handleSignals: boolean,
): {now(): void; disarm(): void} {
  let closed = false
  const cleanupSync = () => {
    if (closed) return
    closed = true
    try {
      unlinkSync(path)
    } catch {}
    // Only remove the endpoint file if it is still ours (a newer generation may have replaced it).
    try {
      // Read as every state file is: bounded, never through a link.
      const current = readJsonFile(endpointFile) ?? {}
      if (current.run_instance_id === runInstanceId && current.path === path) unlinkSync(endpointFile)
    } catch {}
  }
  const signals: NodeJS.Signals[] = handleSignals ? ['SIGTERM', 'SIGINT', 'SIGHUP'] : []
  const onSignal = (signal: NodeJS.Signals) => {
    cleanupSync()
    // Nobody else handles it: die of the signal as we would have without us.
    if (process.listenerCount(signal) === 0) process.kill(process.pid, signal)
  }
  const armed = signals.filter((s) => process.listenerCount(s) === 0)
  for (const signal of armed) process.once(signal, onSignal)
  process.once('exit', cleanupSync)
  return {
    now: cleanupSync,
    disarm: () => {
      for (const signal of armed) process.off(signal, onSignal)
      process.off('exit', cleanupSync)
    },
  }
}
