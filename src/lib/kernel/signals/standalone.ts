/**
 * Standalone services: a service that is not a Run (`actors music serve
 * --state-dir DIR` is one) publishes its endpoint in its own directory as
 * `<kind>-endpoint.json` `{owner_mode: "standalone", path, service_instance_id,
 * service_pid, service_identity, ready_at, actions}` and answers on the
 * line-socket transport, one JSON line per connection, like a Run's endpoint.
 * `actors control DIR ACTION [VALUE]` reaches it through here, whatever the
 * service is: the service's module only describes its kind (ServiceKind).
 *
 * Wire: `{"service_instance_id", "action", "value"?}` → `{"ok": true, ...}` or
 * `{"ok": false, "error", "code"?, "exit_code"?}` (at most 4 KiB). A request
 * carrying another service_instance_id is refused (`code: "foreign-instance"`),
 * so a client holding an old endpoint file never steers a newer service.
 */
import {type Stats, unlinkSync} from 'node:fs'
import {join} from 'node:path'
import {randomUuid} from '../../base/platform/builtins.js'
import {
  ActorsError,
  EXIT,
  corruptStateError,
  notActiveError,
  refusedError,
  usageError,
} from '../../base/platform/errors.js'
import {withLock} from '../../base/platform/file-lock.js'
import {isSameProcess, readProcessIdentity, type ProcessIdentity} from '../../base/platform/process-identity.js'
import {readJsonFile, writeJsonAtomic} from '../../base/platform/state-files.js'
import {isOwnSocketPath, REQUEST_TIMEOUT_MS, requestProvenListener, type ControlReply} from './endpoint.js'
import {unprovenServiceListener} from './listener-proof.js'
import {validateControlInput} from './journal.js'
import {LineSocketError, serveLines} from '../../base/platform/line-socket.js'

/** What a standalone service publishes about itself. */
export interface StandaloneEndpoint {
  owner_mode: 'standalone'
  path: string
  service_instance_id: string
  service_pid: number
  service_identity?: ProcessIdentity
  ready_at: string
  /** The actions it accepts; `actors control` refuses any other before sending (exit 2). */
  actions?: string[]
  /** Set when the service ended cleanly (the file stays, so `status` can still find the dir). */
  stopped_at?: string
}

/** One request line, as the service receives it. */
export interface StandaloneRequest {
  service_instance_id: string
  action: string
  value?: string | number | null
}

/**
 * What the control router needs to know about a kind of service beyond its
 * endpoint: checks that need no service, and what to say when none runs.
 * The service's own module provides it (music/playback-kind.ts for
 * playback); the front ends hand the list to the router.
 */
export interface ServiceKind {
  /** Names the endpoint file (`<name>-endpoint.json`) and the dir's lock. */
  name: string
  /** Whether `dir` holds this kind's files (its endpoint, or state a stopped service leaves). */
  holds(dir: string): boolean
  /** Check an action and its value before anything is sent or journaled; throws an ActorsError (exit 2). */
  checkRequest?(action: string, value: string | undefined): void
  /** The last known status when no service answers (a stopped service, a finished Run). */
  lastKnownStatus?(dir: string): Record<string, unknown>
  /** The fix to show when no service runs for `dir`. */
  startHint?(dir: string): string
}

/** `<kind>-endpoint.json` in `dir`. */
export function standaloneEndpointFile(dir: string, kind: string): string {
  return join(dir, `${kind}-endpoint.json`)
}

/** The endpoint a standalone service of `kind` published in `dir`; undefined when absent; throws (naming the file) when damaged. */
export function readStandaloneEndpoint(dir: string, kind: string): StandaloneEndpoint | undefined {
  return readJsonFile<StandaloneEndpoint>(standaloneEndpointFile(dir, kind))
}

/** Whether the service an endpoint file names is still the same live process. */
export function standaloneAlive(endpoint: StandaloneEndpoint): boolean {
  if (endpoint.stopped_at) return false
  if (endpoint.service_identity) return isSameProcess(endpoint.service_identity)
  try {
    process.kill(endpoint.service_pid, 0)
    return true
  } catch {
    return false
  }
}

export interface ServeStandaloneOptions {
  kind: string
  /** The socket to listen on (in `dir`, or a short path in the temp dir). */
  socketPath: string
  /** Published in the endpoint file. */
  actions: readonly string[]
  serviceInstanceId?: string
  /** Answer one request addressed to this instance. */
  handle(action: string, value: string | number | null | undefined): Promise<ControlReply>
  /** Serialise a reply (within 4 KiB); default JSON.stringify. */
  encode?(reply: ControlReply): string
}

export interface StandaloneServer {
  endpoint: StandaloneEndpoint
  /** Stop accepting, let in-flight replies finish, remove the socket, mark the endpoint file stopped. */
  close(): Promise<void>
}

/**
 * Claim `dir` for one service of `kind` and start serving. Refuses (exit 5)
 * while another live service owns the dir, touching none of its files; a dead
 * one's socket is replaced.
 */
export async function serveStandaloneEndpoint(dir: string, options: ServeStandaloneOptions): Promise<StandaloneServer> {
  const {kind, socketPath: path} = options
  const serviceInstanceId = options.serviceInstanceId ?? randomUuid()
  const file = standaloneEndpointFile(dir, kind)
  const encode = options.encode ?? ((reply: ControlReply) => JSON.stringify(reply))

  const answer = async (line: string): Promise<string> => {
    let request: StandaloneRequest
    try {
      request = JSON.parse(line)
    } catch {
      return encode({ok: false, error: 'request is not one JSON line', code: 'bad-request'})
    }
    if (!request || typeof request !== 'object' || typeof request.action !== 'string') {
      return encode({ok: false, error: 'request needs an "action"', code: 'bad-request'})
    }
    if (request.service_instance_id !== serviceInstanceId) {
      return encode({
        ok: false,
        error: `request is for service instance ${JSON.stringify(request.service_instance_id ?? null)}, this service is ${serviceInstanceId}`,
        code: 'foreign-instance',
      })
    }
    return encode(await options.handle(request.action, request.value))
  }

  let server: Awaited<ReturnType<typeof serveLines>> | undefined
  const endpoint = await withLock(join(dir, `.${kind}.lock`), async () => {
    let existing: StandaloneEndpoint | undefined
    try {
      existing = readStandaloneEndpoint(dir, kind)
    } catch {
      existing = undefined // a damaged endpoint file describes nothing alive
    }
    if (existing && standaloneAlive(existing)) {
      throw refusedError(
        `a ${kind} service already runs for ${dir} (pid ${existing.service_pid})`,
        `control it with \`actors control ${dir} status\`, or stop it with \`actors control ${dir} stop\``,
      )
    }
    server = await serveLines(path, answer, {
      refuse: (message, reason) => JSON.stringify({ok: false, error: message, code: reason}),
    })
    const written: StandaloneEndpoint = {
      owner_mode: 'standalone',
      path,
      service_instance_id: serviceInstanceId,
      service_pid: process.pid,
      service_identity: readProcessIdentity(process.pid),
      ready_at: new Date().toISOString(),
      actions: [...options.actions],
    }
    writeJsonAtomic(file, written)
    return written
  })

  let closing: Promise<void> | undefined
  return {
    endpoint,
    close() {
      closing ??= (async () => {
        await server!.close()
        // The file stays (marked stopped): it is how `actors control DIR status` finds this dir
        // afterwards and answers from the service's own state; liveness is always checked by identity.
        try {
          const current = readStandaloneEndpoint(dir, kind)
          if (current?.service_instance_id === serviceInstanceId)
            writeJsonAtomic(file, {...current, stopped_at: new Date().toISOString()})
        } catch {}
        try {
          unlinkSync(path)
        } catch {}
      })()
      return closing
    },
  }
}

/** What `actors control DIR ACTION` returns for a standalone service. */
export interface StandaloneControlResult {
  ok: true
  action: string
  /** `service` when a running service answered, `checkpoint` when its kind answered from the state it left. */
  source: 'service' | 'checkpoint'
  [field: string]: unknown
}

/**
 * Apply ACTION [VALUE] to the standalone service of `kind` in `dir`. Bad input
 * (bounds, the kind's own check, an action the service does not publish):
 * exit 2, nothing sent. No live service: `status` answers from the kind's last
 * known status (exit 0), anything else is exit 3. A refusal for who is asking
 * or when (another instance, shutting down) or no reply within 5 s: exit 3; a
 * service's `exit_code: 2` refusal: exit 2; any other refusal, or a broken
 * reply (over 4 KiB, not JSON): exit 1.
 */
export async function controlStandaloneService(
  dir: string,
  kind: ServiceKind,
  action: string,
  value?: string,
): Promise<StandaloneControlResult> {
  validateControlInput(action, value)
  kind.checkRequest?.(action, value)
  const file = standaloneEndpointFile(dir, kind.name)
  let endpoint: StandaloneEndpoint | undefined
  try {
    endpoint = readStandaloneEndpoint(dir, kind.name)
  } catch (error) {
    if (error instanceof ActorsError) throw error
    throw corruptStateError(file, (error as Error).message)
  }
  if (endpoint?.actions && !endpoint.actions.includes(action)) {
    throw usageError(
      `the ${kind.name} service in ${dir} does not accept "${action}"`,
      `it accepts ${endpoint.actions.join(', ')}`,
      {actions: endpoint.actions},
    )
  }
  const notRunning = (unproven?: string): StandaloneControlResult => {
    if (action === 'status' && kind.lastKnownStatus)
      return {
        ok: true,
        action,
        status: kind.lastKnownStatus(dir),
        source: 'checkpoint',
        ...(unproven ? {unproven} : {}),
      }
    if (unproven)
      throw notActiveError(unproven, `only the service that published ${file} is asked; start one with its own socket`)
    throw notActiveError(
      `no ${kind.name} service is running for ${dir}`,
      kind.startHint?.(dir) ?? 'start its service again',
    )
  }
  if (!endpoint || !standaloneAlive(endpoint)) return notRunning()
  let unproven: string | undefined
  let reply: ControlReply
  try {
    reply = await requestProvenListener(
      endpoint.path,
      {service_instance_id: endpoint.service_instance_id, action, value: value ?? null} satisfies StandaloneRequest,
      (file) => (unproven = unprovenStandalone(dir, endpoint, file)),
    )
  } catch (error) {
    if (!(error instanceof LineSocketError)) throw error
    if (error.kind === 'unreachable') return notRunning(unproven ? error.message : undefined)
    if (error.kind === 'timeout') {
      throw notActiveError(
        `the ${kind.name} service did not answer within ${REQUEST_TIMEOUT_MS / 1000}s`,
        `it may be stuck; check it with \`actors control ${dir} status\` or stop it`,
      )
    }
    throw new ActorsError(
      `the ${kind.name} service broke the protocol: ${error.message}`,
      EXIT.failed,
      'one JSON line of at most 4 KiB is expected; restart the service',
    )
  }
  if (!reply.ok) {
    const refused = `the ${kind.name} service refused ${action}: ${reply.error}`
    if (reply.code === 'foreign-instance' || reply.code === 'stopping')
      throw notActiveError(refused, `re-read ${file} and retry`, {reply})
    throw new ActorsError(refused, reply.exit_code === EXIT.usage ? EXIT.usage : EXIT.failed, undefined, {reply})
  }
  return {...reply, ok: true, action: typeof reply.action === 'string' ? reply.action : action, source: 'service'}
}

/**
 * Why the socket a standalone endpoint names is not proven to be its
 * service's, or undefined (issue 35: a planted endpoint file was followed to
 * any socket). Proven: a socket in `dir` (or the temp-dir name socketPathIn
 * gives one of `dir`'s), listening at exactly that path as bound, held by the
 * process the file names, which standaloneAlive checked by identity.
 */
function unprovenStandalone(dir: string, endpoint: StandaloneEndpoint, file: Stats): string | undefined {
  if (typeof endpoint.path !== 'string' || !isOwnSocketPath(dir, endpoint.path))
    return `is not a socket in ${dir} (nor the temp-dir name of one)`
  if (!Number.isInteger(endpoint.service_pid)) return 'names no service process (service_pid)'
  return unprovenServiceListener(endpoint.path, file, endpoint.service_pid)
}

/** Whether any of `kinds` has its files in `dir` (the router's test for a standalone service dir). */
export function kindHolding(dir: string, kinds: readonly ServiceKind[]): ServiceKind | undefined {
  return kinds.find((kind) => kind.holds(dir))
}
