/**
 * An `actors mcp --owner O` server acts only on Runs of owner O (SPEC:
 * Authority over files and Runs): a tool that sends to, restarts, controls or
 * relaunches a Run of another owner is refused (exit 5) before anything is
 * written, so the refusal changes nothing. Reading (inspect, logs) is not
 * acting and stays open, as on the command line.
 */
import {refusedError} from '../../base/platform/errors.js'
import {resolveRunRef} from '../../base/platform/home.js'
import {readRunMetaById, requireRun} from '../../kernel/runs/store.js'
import type {McpPolicy} from './policy.js'

/** The owner a run.json records ("default" for one written without it). */
function ownerOf(meta: {owner?: unknown}): string {
  return typeof meta.owner === 'string' && meta.owner !== '' ? meta.owner : 'default'
}

function refuseForeign(run: string, owner: string, policy: McpPolicy): never {
  throw refusedError(
    `Run ${run} belongs to owner ${owner}; this server acts only for owner ${policy.owner} (actors mcp --owner)`,
    `act on it from a server of its owner (actors mcp --owner ${owner}), or launch a Run of your own`,
    {run, owner, policy: 'owner', server_owner: policy.owner},
  )
}

/** Refuse (exit 5) acting on the existing Run `runRef` unless it belongs to the server's owner; exit 4 when there is none. */
export function enforceRunOwner(policy: McpPolicy, home: string, runRef: string): void {
  const {meta} = requireRun(home, resolveRunRef(home, runRef))
  const owner = ownerOf(meta)
  if (owner !== policy.owner) refuseForeign(meta.run, owner, policy)
}

/**
 * Refuse (exit 5) a launch under a chosen id (`run {name}`) that would start
 * the next generation of another owner's Run. A new id, or one of this
 * owner's, passes (the launch itself decides the rest).
 */
export function enforceNameOwner(policy: McpPolicy, home: string, name: string | undefined): void {
  if (name === undefined) return
  let meta
  try {
    meta = readRunMetaById(home, name)
  } catch {
    return // a bad name or a damaged run.json: the launch refuses it with its own words
  }
  if (meta && ownerOf(meta) !== policy.owner) refuseForeign(meta.run, ownerOf(meta), policy)
}
