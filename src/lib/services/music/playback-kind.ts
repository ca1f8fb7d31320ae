/**
 * What the control router needs to know about playback services beyond their
 * endpoint (which it reaches like any standalone service's, through
 * signals/standalone.ts): which dirs hold one, the request check made before
 * anything is sent, and `status` with no service running, from the checkpoint
 * (a stopped standalone service, a finished playback Run).
 */
import {existsSync} from 'node:fs'
import {REQUEST_TIMEOUT_MS, requestJsonReply} from '../../kernel/signals/endpoint.js'
import type {ServiceKind} from '../../kernel/signals/standalone.js'
import {ActorsError, EXIT} from '../../base/platform/errors.js'
import {isSameProcess} from '../../base/platform/process-identity.js'
import {checkpointFile, readCheckpoint} from './checkpoint.js'
import {
  PLAYBACK_KIND,
  endpointFile,
  type EndpointReply,
  type EndpointRequest,
  type PlaybackEndpoint,
} from './endpoint.js'
import {parsePlaybackRequestOrUsage} from './requests.js'
import {projectStatus, unknownStatus} from './status.js'
import type {PlaybackStatus} from './types.js'

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
  if (!read.ok)
    throw new ActorsError(
      read.problem,
      EXIT.failed,
      'a playback service started on this dir rebuilds it; or remove the file',
    )
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

/**
 * Send one request to an endpoint and return its reply, whatever it says
 * (exported so tests can send a foreign instance id). The same exchange
 * `actors control` makes (signals/standalone.ts).
 */
export function sendPlaybackRequest(
  endpoint: Pick<PlaybackEndpoint, 'path'>,
  request: EndpointRequest,
  timeoutMs = REQUEST_TIMEOUT_MS,
): Promise<EndpointReply> {
  return requestJsonReply(endpoint.path, request, timeoutMs) as Promise<EndpointReply>
}

/**
 * The playback service as a kind of service the control router knows: its
 * files mark a dir (or a Run) as playback's, its requests are checked before
 * anything is sent (a bad value is exit 2, nothing journaled), and with no
 * service running `status` answers from the checkpoint.
 */
export const playbackServiceKind: ServiceKind = {
  name: PLAYBACK_KIND,
  holds: holdsPlaybackFiles,
  checkRequest: (action, value) => void parsePlaybackRequestOrUsage(action, value),
  lastKnownStatus: (dir) => readPlaybackStatus(dir) as unknown as Record<string, unknown>,
  startHint: (dir) => `start one with \`actors music serve SOURCE --state-dir ${dir}\``,
}
