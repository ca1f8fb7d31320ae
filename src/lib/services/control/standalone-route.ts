/**
 * The control router's way to standalone services (SPEC: Music): a directory
 * outside the state root that a service of a known kind uses is controlled
 * through that service's published endpoint, not as a Run.
 */
import {existsSync, realpathSync} from 'node:fs'
import {dirname, resolve} from 'node:path'
import {runsDir} from '../../base/platform/home.js'
import {isDirectory} from '../../base/platform/state-files.js'
import {controlStandaloneService, kindHolding, type ServiceKind} from '../../kernel/signals/standalone.js'

/**
 * A directory given by path, outside $ACTORS_HOME/runs, holding the files of
 * a standalone service of a known kind (`actors music serve --state-dir DIR`:
 * its playback-endpoint.json, or the playback.json a stopped service leaves)
 * is that service's; `status` of any other directory outside the state root
 * asks the first kind (the shipped default, playback: state "unknown"). Any
 * other path is a Run reference (and refused unless it is a Run state dir).
 */
export function standaloneServiceDir(
  home: string,
  ref: string,
  action: string,
  services: readonly ServiceKind[],
): {dir: string; kind: ServiceKind} | undefined {
  if (!ref.includes('/') && ref !== '.' && ref !== '..') return undefined
  const dir = resolve(ref)
  if (!isDirectory(dir)) return undefined
  // `status` of a directory no service has used yet answers state "unknown" (SPEC: Music).
  const kind = kindHolding(dir, services) ?? (action === 'status' ? services[0] : undefined)
  if (!kind) return undefined
  const runs = runsDir(home)
  const realRuns = existsSync(runs) ? realpathSync(runs) : runs
  if (dirname(realpathSync(dir)) === realRuns) return undefined
  return {dir, kind}
}

/** A standalone service's directory: reached through its published endpoint, like any other. */
export async function controlStandalone(
  dir: string,
  kind: ServiceKind,
  action: string,
  value: string | undefined,
): Promise<{standalone: true; [key: string]: unknown}> {
  const reply = await controlStandaloneService(dir, kind, action, value)
  // status: the service's status fields at the top level too (SPEC: `status` prints {state, index, count, track, ...}).
  const status =
    action === 'status' && reply.status && typeof reply.status === 'object'
      ? (reply.status as Record<string, unknown>)
      : {}
  return {standalone: true, ...status, ...reply}
}
