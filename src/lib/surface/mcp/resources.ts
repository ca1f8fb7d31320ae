/**
 * MCP resources: `actors://runs` (the Run table) and `actors://runs/{run}`
 * (one Run's inspect document), with `resources/subscribe`. The SDK's
 * high-level server does not implement subscriptions, so the handlers are
 * ours: each subscription watches with a Doorbell (the state root's for the
 * table, rung when a Run starts or ends; the Run's own dir for one Run,
 * which changes whenever run.json is rewritten) and sends
 * `notifications/resources/updated` when what a read returns has changed.
 */
import {ResourceTemplate, type JSONRPCMessage, type McpServer, type Transport} from '@modelcontextprotocol/server'
import {statSync} from 'node:fs'
import {join} from 'node:path'
import {notFoundError, usageError} from '../../base/platform/errors.js'
import {refuseLinkedRuns, runDir, runsDir, validateRunId} from '../../base/platform/home.js'
import {inspectRun, listRunSummaries} from '../../kernel/history/inspect.js'
import {BELL_FILE} from '../../base/bell/notify.js'
import {readRunState, runFile} from '../../kernel/runs/store.js'
import {isTerminal} from '../../base/records/run.js'
import {Doorbell} from '../../base/bell/doorbell.js'
import {boundDetail, boundListing} from './bound.js'
import {listingSummary} from './tools.js'
import {sleep} from '../../base/platform/sleep.js'
import {errorResponseOf, protocolErrorOf} from './rpc-errors.js'
import {isActorsError} from '../../base/platform/errors.js'

const RUNS_URI = 'actors://runs'
const RUN_PREFIX = `${RUNS_URI}/`
/** A Run writing output fast rings its dir's bell constantly: look at most this often. */
const SETTLE_MS = 100
/** At most this many Runs in resources/list (the live ones and the most recent). */
const LISTED_RUNS = 100

/** Register both resources and the subscribe/unsubscribe handlers; close() ends every watch. */
export function registerRunResources(server: McpServer, home: string): {close(): void} {
  const json = (uri: string, document: unknown) => ({
    contents: [{uri, mimeType: 'application/json', text: JSON.stringify(document)}],
  })
  server.registerResource(
    'runs',
    RUNS_URI,
    {
      title: 'Runs',
      description: 'The table of Runs (the inspect tool without arguments)',
      mimeType: 'application/json',
    },
    async (uri) => {
      const listing = listRunSummaries(home)
      return json(uri.href, boundListing(listing, listingSummary(listing)))
    },
  )
  server.registerResource(
    'run',
    new ResourceTemplate(`${RUN_PREFIX}{run}`, {
      list: async () => {
        const runs = listRunSummaries(home).runs
        const live = runs.filter((r) => !isTerminal(r.status))
        const recent = runs.filter((r) => isTerminal(r.status)).slice(-LISTED_RUNS)
        return {
          resources: [...live, ...recent].slice(0, LISTED_RUNS).map((r) => ({
            uri: RUN_PREFIX + r.run,
            name: r.run,
            title: `${r.run} (${r.status})`,
            mimeType: 'application/json',
          })),
        }
      },
    }),
    {
      title: 'One Run',
      description: "A Run's inspect document: meta, result, controls, artifacts, trace tail",
      mimeType: 'application/json',
    },
    async (uri, variables) => {
      try {
        const detail = inspectRun(home, runIdOf(String(variables.run)))
        return json(uri.href, boundDetail(detail, ''))
      } catch (error) {
        throw protocolErrorOf(error, {uri: uri.href})
      }
    },
  )

  const watches = new Map<string, AbortController>()
  server.server.setRequestHandler('resources/subscribe', async (request) => {
    const uri = request.params.uri
    if (!watches.has(uri)) {
      let target: WatchTarget
      try {
        target = watchTarget(home, uri)
      } catch (error) {
        throw protocolErrorOf(error, {uri})
      }
      const stop = new AbortController()
      watches.set(uri, stop)
      void watchForChanges(target, stop.signal, () => server.server.sendResourceUpdated({uri}).catch(() => {}))
    }
    return {}
  })
  server.server.setRequestHandler('resources/unsubscribe', async (request) => {
    watches.get(request.params.uri)?.abort()
    watches.delete(request.params.uri)
    return {}
  })
  return {
    close() {
      for (const stop of watches.values()) stop.abort()
      watches.clear()
    },
  }
}

/**
 * Check the Run id of every `resources/read` under `actors://runs/` on the URI
 * as sent, before the SDK parses it: its URL parser resolves dot segments,
 * percent-encoded ones too, so `actors://runs/%2e%2e` reached the table's
 * handler as `actors://runs` and `x/%2e%2e/y` would have read Run y. Such a
 * URI is refused as `..%2Fx` is (-32602). Install after the server connected
 * the transport (it wraps onmessage, which connect sets).
 */
/** The methods whose params name a resource by `uri`. */
const URI_METHODS = new Set<unknown>(['resources/read', 'resources/subscribe', 'resources/unsubscribe'])

export function guardResourceUris(transport: Transport): void {
  const onmessage = transport.onmessage
  transport.onmessage = (message: JSONRPCMessage, ...rest: unknown[]) => {
    const request = message as {id?: string | number; method?: unknown; params?: {uri?: unknown}}
    const uri = request.params?.uri
    // A uri that is no string is invalid params as any other bad one (-32602, the CLI's shape), not the SDK's
    // schema failure (-32603 with its issue dump).
    if (URI_METHODS.has(request.method) && request.id !== undefined && uri !== undefined && typeof uri !== 'string') {
      const error = usageError(
        `${String(request.method)}: params.uri must be a string, not ${uri === null ? 'null' : Array.isArray(uri) ? 'an array' : typeof uri}`,
        `send {"uri": "${RUNS_URI}"} or {"uri": "${RUN_PREFIX}RUN"}`,
      )
      void transport.send(errorResponseOf(request.id, error))
      return
    }
    if (request.method === 'resources/read' && request.id !== undefined && typeof uri === 'string') {
      // The scheme is case-insensitive to the parser (`ACTORS://runs/%2e%2e` resolves the same way).
      if (uri.toLowerCase().startsWith(RUN_PREFIX)) {
        try {
          runIdOf(uri.slice(RUN_PREFIX.length))
        } catch (error) {
          if (!isActorsError(error)) throw error
          void transport.send(errorResponseOf(request.id, error, {uri}))
          return
        }
      }
    }
    ;(onmessage as ((m: JSONRPCMessage, ...r: unknown[]) => void) | undefined)?.(message, ...rest)
  }
}

interface WatchTarget {
  dir: string
  /** Changes exactly when a read of the resource may return something new. */
  fingerprint(): string
}

/** What to watch for a resource URI; an unknown Run or URI is refused. */
function watchTarget(home: string, uri: string): WatchTarget {
  if (uri === RUNS_URI) {
    // The bell is replaced whenever a Run starts, ends or asks for attention; runs/ changes when a Run appears or is pruned.
    return {dir: home, fingerprint: () => `${mtime(join(home, BELL_FILE))}|${mtime(runsDir(home))}`}
  }
  if (uri.startsWith(RUN_PREFIX)) {
    const id = runIdOf(uri.slice(RUN_PREFIX.length))
    const dir = runDir(home, id)
    refuseLinkedRuns(home)
    if (!readRunState(dir, {withResult: false, refuseLink: true}))
      throw notFoundError(`Run ${id} not found in ${runsDir(home)}`)
    return {
      dir,
      fingerprint: () => {
        // A read settles a Run whose supervisor vanished (reconciliation), so a lost Run also changes here.
        const state = readRunState(dir, {withResult: false, refuseLink: true})
        return state ? `${state.meta.run_instance_id}|${state.meta.status}|${mtime(runFile(dir, 'meta'))}` : 'gone'
      },
    }
  }
  throw notFoundError(`no resource ${uri}`, `subscribe to ${RUNS_URI} or ${RUN_PREFIX}RUN`)
}

/** The Run id in a resource URI, percent-decoded; a malformed escape or an invalid id is a usage error (-32602). */
function runIdOf(encoded: string): string {
  let id: string
  try {
    id = decodeURIComponent(encoded)
  } catch {
    throw usageError(
      `Run id ${JSON.stringify(encoded)} in the resource URI is not valid percent-encoding`,
      `use ${RUN_PREFIX}RUN with a Run id from ${RUNS_URI}`,
    )
  }
  return validateRunId(id)
}

function mtime(file: string): number {
  try {
    return statSync(file).mtimeMs
  } catch {
    return 0
  }
}

/** Call `changed` each time the target's fingerprint changes, woken by its doorbell (and the doorbell's safety poll). */
async function watchForChanges(target: WatchTarget, signal: AbortSignal, changed: () => void): Promise<void> {
  const bell = new Doorbell(target.dir)
  let last = target.fingerprint()
  try {
    while (!signal.aborted) {
      await bell.next(Infinity, signal)
      await sleep(SETTLE_MS)
      bell.clear()
      let now: string
      try {
        now = target.fingerprint()
      } catch {
        now = 'unreadable'
      }
      if (now !== last) {
        last = now
        changed()
      }
    }
  } finally {
    bell.close()
  }
}
