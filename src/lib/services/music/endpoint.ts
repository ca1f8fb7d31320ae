/**
 * The standalone playback endpoint: `playback-endpoint.json` in the state
 * dir, a standalone service endpoint like any other (signals/standalone.ts):
 * `{owner_mode: "standalone", path, service_instance_id, service_pid,
 * service_identity, ready_at, actions}`, one JSON line per connection on
 * `playback.sock`, only requests carrying this service's instance id served.
 * What is playback's own here: the file's name, the socket's, the actions it
 * publishes, and a reply encoding that shortens a long track name rather than
 * failing the reply.
 */
import {randomUuid} from '../../base/platform/builtins.js'
import {MAX_REPLY_BYTES, socketPathIn} from '../../base/platform/line-socket.js'
import {
  serveStandaloneEndpoint,
  standaloneAlive,
  standaloneEndpointFile,
  type StandaloneEndpoint,
  type StandaloneRequest,
  type StandaloneServer,
} from '../../kernel/signals/standalone.js'
import {PLAYBACK_ALIASES} from './requests.js'
import {PLAYBACK_ACTIONS, type PlaybackReply} from './types.js'

/** The service kind's name: its endpoint file is `playback-endpoint.json`. */
export const PLAYBACK_KIND = 'playback'
export const ENDPOINT_FILE = `${PLAYBACK_KIND}-endpoint.json`
/** Every action a playback service answers, aliases included: what its endpoint publishes. */
export const PUBLISHED_ACTIONS: readonly string[] = [...PLAYBACK_ACTIONS, ...Object.keys(PLAYBACK_ALIASES)]

export type PlaybackEndpoint = StandaloneEndpoint
/** What a client sends: one line. */
export type EndpointRequest = StandaloneRequest
export type EndpointReply = PlaybackReply

export function endpointFile(dir: string): string {
  return standaloneEndpointFile(dir, PLAYBACK_KIND)
}

/** Whether the service an endpoint file names is still the same live process. */
export const endpointAlive = standaloneAlive

/** Encode a reply as one line within the size bound (a long track name is shortened, never the JSON). */
export function encodeReply(reply: EndpointReply): string {
  let line = JSON.stringify(reply)
  if (Buffer.byteLength(line) > MAX_REPLY_BYTES && reply.ok) {
    const track = reply.status.track ?? ''
    line = JSON.stringify({...reply, status: {...reply.status, track: `${track.slice(0, 200)}…${track.slice(-200)}`}})
  }
  if (Buffer.byteLength(line) > MAX_REPLY_BYTES)
    line = JSON.stringify({ok: false, error: 'reply too large', code: 'too-large'})
  return line
}

/**
 * Claim the state dir for one playback service and start serving. Refuses
 * (exit 5) while another live service owns the dir; a dead one's leftovers
 * are replaced.
 */
export function servePlaybackEndpoint(
  dir: string,
  handle: (action: string, value: string | number | null | undefined) => Promise<PlaybackReply>,
  serviceInstanceId: string = randomUuid(),
): Promise<StandaloneServer> {
  return serveStandaloneEndpoint(dir, {
    kind: PLAYBACK_KIND,
    socketPath: socketPathIn(dir, 'playback.sock'),
    actions: PUBLISHED_ACTIONS,
    serviceInstanceId,
    handle,
    encode: (reply) => encodeReply(reply as PlaybackReply),
  })
}
