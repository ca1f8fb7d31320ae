/**
 * The standalone playback endpoint: a Unix socket in the state dir answering
 * one JSON line per connection, described by `playback-endpoint.json`
 * `{owner_mode: "standalone", path, service_instance_id, service_pid}`.
 * Only requests that carry this service's instance id are served, so a
 * client holding an old endpoint file can never steer a newer service.
 */
import {nodeNet, randomUuid} from '../builtins.js'
import {unlinkSync} from 'node:fs'
import type {Server, Socket} from 'node:net'
import {join} from 'node:path'
import {refusedError} from '../errors.js'
import {withLock} from '../lock.js'
import {isSameProcess, readProcessIdentity, type ProcessIdentity} from '../process-identity.js'
import {readJsonFile, writeJsonAtomic} from '../state-files.js'
import {socketPathFor} from './mpv-backend.js'
import type {PlaybackReply} from './types.js'

export const ENDPOINT_FILE = 'playback-endpoint.json'
/** Replies and requests are single lines of at most this many bytes (SPEC: Control). */
export const MAX_MESSAGE_BYTES = 4096

export interface PlaybackEndpoint {
  owner_mode: 'standalone'
  path: string
  service_instance_id: string
  service_pid: number
  service_identity?: ProcessIdentity
  ready_at: string
  /** Set when the service ended cleanly. */
  stopped_at?: string
}

/** What a client sends: one line. */
export interface EndpointRequest {
  service_instance_id: string
  action: string
  value?: string | number | null
}

export type EndpointReply = PlaybackReply

export function endpointFile(dir: string): string {
  return join(dir, ENDPOINT_FILE)
}

/** Read playback-endpoint.json; undefined when absent; throws (naming the file) when corrupt. */
export function readEndpoint(dir: string): PlaybackEndpoint | undefined {
  return readJsonFile<PlaybackEndpoint>(endpointFile(dir))
}

/** Whether the service an endpoint file names is still the same live process. */
export function endpointAlive(endpoint: PlaybackEndpoint): boolean {
  if (endpoint.stopped_at) return false
  if (endpoint.service_identity) return isSameProcess(endpoint.service_identity)
  try {
    process.kill(endpoint.service_pid, 0)
    return true
  } catch {
    return false
  }
}

/** Encode a reply as one line within the size bound (a long track name is shortened, never the JSON). */
export function encodeReply(reply: EndpointReply): string {
  let line = JSON.stringify(reply)
  if (Buffer.byteLength(line) > MAX_MESSAGE_BYTES && reply.ok) {
    const track = reply.status.track ?? ''
    line = JSON.stringify({...reply, status: {...reply.status, track: `${track.slice(0, 200)}…${track.slice(-200)}`}})
  }
  if (Buffer.byteLength(line) > MAX_MESSAGE_BYTES) line = JSON.stringify({ok: false, error: 'reply too large', code: 'too-large'})
  return line + '\n'
}

export interface StandaloneEndpoint {
  endpoint: PlaybackEndpoint
  /** Stop accepting, let in-flight replies finish, remove the socket and the endpoint file. */
  close(): Promise<void>
}

/**
 * Claim the state dir for one service and start serving. Refuses (exit 5)
 * while another live service owns the dir; a dead one's leftovers are removed.
 */
export async function serveStandaloneEndpoint(
  dir: string,
  handle: (action: string, value: string | number | null | undefined) => Promise<PlaybackReply>,
  serviceInstanceId: string = randomUuid(),
): Promise<StandaloneEndpoint> {
  const path = socketPathFor(dir, 'playback.sock')
  const connections = new Set<Socket>()
  const inFlight = new Set<Promise<void>>()
  const server: Server = nodeNet().createServer((socket) => {
    connections.add(socket)
    socket.on('close', () => connections.delete(socket))
    socket.on('error', () => {})
    socket.setEncoding('utf8')
    let buffer = ''
    let answered = false
    socket.on('data', (chunk: string) => {
      if (answered) return
      buffer += chunk
      if (Buffer.byteLength(buffer) > MAX_MESSAGE_BYTES + 1) {
        answered = true
        socket.end(encodeReply({ok: false, error: `request over ${MAX_MESSAGE_BYTES} bytes`, code: 'too-large'}))
        return
      }
      const newline = buffer.indexOf('\n')
      if (newline < 0) return
      answered = true
      const work = answer(buffer.slice(0, newline)).then((reply) => {
        socket.end(encodeReply(reply))
      })
      inFlight.add(work)
      void work.finally(() => inFlight.delete(work))
    })
  })

  async function answer(line: string): Promise<EndpointReply> {
    let request: EndpointRequest
    try {
      request = JSON.parse(line)
    } catch {
      return {ok: false, error: 'request is not one JSON line', code: 'bad-request'}
    }
    if (!request || typeof request !== 'object' || typeof request.action !== 'string') {
      return {ok: false, error: 'request needs an "action"', code: 'bad-request'}
    }
    if (request.service_instance_id !== serviceInstanceId) {
      return {
        ok: false,
        error: `request is for service instance ${JSON.stringify(request.service_instance_id ?? null)}, this service is ${serviceInstanceId}`,
        code: 'foreign-instance',
      }
    }
    return handle(request.action, request.value)
  }

  const endpoint = await withLock(join(dir, '.playback.lock'), async () => {
    let existing: PlaybackEndpoint | undefined
    try {
      existing = readEndpoint(dir)
    } catch {
      existing = undefined // a damaged endpoint file describes nothing alive
    }
    if (existing && existing.service_pid !== process.pid && endpointAlive(existing)) {
      throw refusedError(
        `a playback service already runs for ${dir} (pid ${existing.service_pid})`,
        `control it with \`actors control ${dir} status\`, or stop it with \`actors control ${dir} stop\``,
      )
    }
    try {
      unlinkSync(path)
    } catch {}
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject)
      server.listen(path, () => {
        server.off('error', reject)
        resolve()
      })
    })
    const written: PlaybackEndpoint = {
      owner_mode: 'standalone',
      path,
      service_instance_id: serviceInstanceId,
      service_pid: process.pid,
      service_identity: readProcessIdentity(process.pid),
      ready_at: new Date().toISOString(),
    }
    writeJsonAtomic(endpointFile(dir), written)
    return written
  })

  let closing: Promise<void> | undefined
  return {
    endpoint,
    close() {
      closing ??= (async () => {
        const closed = new Promise<void>((resolve) => server.close(() => resolve()))
        await Promise.race([Promise.all(inFlight), new Promise((r) => setTimeout(r, 2000))])
        // Replies were handed to socket.end(); give them a moment to flush before cutting idle clients.
        const flushed = [...connections].map((socket) => new Promise((r) => socket.once('close', r)))
        await Promise.race([Promise.all(flushed), new Promise((r) => setTimeout(r, 500))])
        for (const socket of connections) socket.destroy()
        await closed
        // The file stays (marked stopped): it is how `actors control DIR status` finds this dir
        // afterwards and answers from the checkpoint; liveness is always checked by identity.
        try {
          const current = readEndpoint(dir)
          if (current?.service_instance_id === serviceInstanceId) writeJsonAtomic(endpointFile(dir), {...current, stopped_at: new Date().toISOString()})
        } catch {}
        try {
          unlinkSync(path)
        } catch {}
      })()
      return closing
    },
  }
}
