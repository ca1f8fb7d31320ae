/**
 * The client side of a standalone playback service: what `actors control DIR
 * ACTION [VALUE]` calls for a DIR holding `playback-endpoint.json`. It sends
 * one request carrying the endpoint's service_instance_id, waits at most 5 s,
 * and maps every outcome to a documented exit code. `status` also works with
 * no service running, from the checkpoint.
 */
import {existsSync} from 'node:fs'
import {nodeNet} from '../builtins.js'
import {ActorsError, EXIT, corruptStateError, notActiveError} from '../errors.js'
import {isSameProcess} from '../process-identity.js'
import {checkpointFile, readCheckpoint} from './checkpoint.js'
import {ENDPOINT_FILE, MAX_MESSAGE_BYTES, endpointFile, endpointAlive, readEndpoint, type EndpointReply, type EndpointRequest, type PlaybackEndpoint} from './endpoint.js'
import {parsePlaybackRequestOrUsage} from './requests.js'
import {projectStatus, unknownStatus} from './status.js'
import type {PlaybackStatus} from './types.js'

export const CONTROL_TIMEOUT_MS = 5000

/**
 * Whether `dir` holds a standalone playback service's files: its endpoint, or
 * the checkpoint a stopped service leaves (the control command's routing test).
 */
export function holdsPlaybackFiles(dir: string): boolean {
  return existsSync(endpointFile(dir)) || existsSync(checkpointFile(dir))
}

/**
 * The last known status of `dir` without asking a service: from playback.json,
 * `state: "unknown"` when there is none. A checkpoint whose service is gone
 * says `stopped` (nothing plays), with its position frozen. A damaged
 * checkpoint fails closed naming the file (exit 1).
 */
export function readPlaybackStatus(dir: string): PlaybackStatus {
  const read = readCheckpoint(dir)
  if (read === undefined) return {...unknownStatus(), service: 'not running'}
  if (!read.ok) throw new ActorsError(read.problem, EXIT.failed, 'a playback service started on this dir rebuilds it; or remove the file')
  const {checkpoint} = read
  const live = checkpoint.service_identity ? isSameProcess(checkpoint.service_identity) : false
  const status: PlaybackStatus = {
    state: checkpoint.state,
    index: checkpoint.index,
    count: checkpoint.count,
    track: checkpoint.track,
    player: checkpoint.player,
    volume: checkpoint.volume,
    position_seconds: checkpoint.position_seconds,
    duration_seconds: checkpoint.duration_seconds,
    progress_percent: checkpoint.progress_percent,
    position_updated_at_ms: checkpoint.position_updated_at_ms,
    updated_at: checkpoint.updated_at,
    loop: checkpoint.loop,
    shuffle: checkpoint.shuffle,
    ...(checkpoint.reason ? {reason: checkpoint.reason} : {}),
    service: live ? 'running' : 'not running',
  }
  if (!live && status.state !== 'stopped' && status.state !== 'unknown') {
    status.state = 'stopped'
    status.reason = 'service-gone'
  }
  return projectStatus(status)
}

/** Send one request to an endpoint and return its reply (exported so tests can send a foreign instance id). */
export function sendPlaybackRequest(endpoint: Pick<PlaybackEndpoint, 'path'>, request: EndpointRequest, timeoutMs = CONTROL_TIMEOUT_MS): Promise<EndpointReply> {
  return new Promise((resolve, reject) => {
    const socket = nodeNet().createConnection(endpoint.path)
    let data = ''
    let bytes = 0
    const fail = (error: Error) => {
      clearTimeout(timer)
      socket.destroy()
      reject(error)
    }
    const timer = setTimeout(() => {
      fail(notActiveError(`the playback service did not answer within ${timeoutMs / 1000}s`, 'it may be stuck; check it with `actors control DIR status` or stop it'))
    }, timeoutMs)
    socket.setEncoding('utf8')
    socket.on('connect', () => socket.write(JSON.stringify(request) + '\n'))
    socket.on('data', (chunk: string) => {
      data += chunk
      bytes += Buffer.byteLength(chunk)
      // One line of at most 4 KiB, as on a Run's endpoint (SPEC: Music): a longer reply is refused, not read on.
      if (bytes > MAX_MESSAGE_BYTES + 1) {
        fail(new ActorsError(`the playback service sent a reply over ${MAX_MESSAGE_BYTES} bytes`, EXIT.failed, 'the service broke the protocol (one JSON line, at most 4 KiB); restart it'))
      }
    })
    socket.on('error', (error) => {
      clearTimeout(timer)
      reject(error)
    })
    socket.on('end', () => {
      clearTimeout(timer)
      try {
        resolve(JSON.parse(data.trim()))
      } catch {
        reject(new ActorsError(`the playback service sent a reply that is not JSON: ${data.slice(0, 200)}`, EXIT.failed))
      }
    })
  })
}

export interface StandaloneControlResult {
  ok: true
  action: string
  status: PlaybackStatus
  /** `service` when a running service answered, `checkpoint` when status came from playback.json. */
  source: 'service' | 'checkpoint'
}

/**
 * Apply ACTION [VALUE] to the standalone service of `dir`. Bad input: exit 2.
 * No live service: `status` answers from the checkpoint (exit 0), anything
 * else is exit 3. A service that refuses (foreign instance id): exit 3.
 */
export async function controlStandalonePlayback(dir: string, action: string, value?: string | number | null): Promise<StandaloneControlResult> {
  parsePlaybackRequestOrUsage(action, value)
  let endpoint: PlaybackEndpoint | undefined
  try {
    endpoint = readEndpoint(dir)
  } catch (error) {
    if (error instanceof ActorsError) throw error
    throw corruptStateError(`${dir}/${ENDPOINT_FILE}`, (error as Error).message)
  }
  const notRunning = () => {
    if (action === 'status') return {ok: true as const, action, status: readPlaybackStatus(dir), source: 'checkpoint' as const}
    throw notActiveError(`no playback service is running for ${dir}`, `start one with \`actors music serve SOURCE --state-dir ${dir}\``)
  }
  if (!endpoint || !endpointAlive(endpoint)) return notRunning()
  let reply: EndpointReply
  try {
    reply = await sendPlaybackRequest(endpoint, {service_instance_id: endpoint.service_instance_id, action, value: value ?? null})
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'ECONNREFUSED' || code === 'ENOENT') return notRunning()
    throw error
  }
  if (!reply.ok) {
    // Refused for who is asking or when (another instance, shutting down): not active, exit 3.
    if (reply.code === 'foreign-instance' || reply.code === 'stopping') {
      throw notActiveError(`the playback service refused ${action}: ${reply.error}`, `re-read ${dir}/${ENDPOINT_FILE} and retry`, {reply})
    }
    if (reply.exit_code === EXIT.usage) throw new ActorsError(`the playback service refused ${action}: ${reply.error}`, EXIT.usage, undefined, {reply})
    throw new ActorsError(`the playback service refused ${action}: ${reply.error}`, EXIT.failed, undefined, {reply})
  }
  return {ok: true, action: reply.action, status: reply.status, source: 'service'}
}
