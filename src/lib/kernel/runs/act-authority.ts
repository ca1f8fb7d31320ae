/**
 * Who may act on a Run from inside another Run's tree (SPEC: Authority over
 * files and Runs, "Trees, owners and limits"; issue: a Run cannot lie to the
 * kernel). A process inside a Run acts for that Run's tree: for its owner, as
 * `emit --run` does, so `ACTORS_OWNER=bob actors control bobrun kill` from
 * inside a Run of another owner is refused (exit 5) instead of reaching bob's
 * Run, and an agent's Run cannot step around its server's `--owner` fence.
 * Outside every Run the person at the shell acts on any Run of the state root,
 * as before.
 */
import {refusedError} from '../../base/platform/errors.js'
import {isPlainName, resolveRunRef} from '../../base/platform/home.js'
import {isInTreeOf} from './emit-authority.js'
import {unitOfCaller} from './lineage.js'
import {readRunMetaById} from './store.js'
import type {RunMeta} from '../../base/records/run.js'

/** The live Run the caller runs in, from its unit, else from a lineage claim that checks out; undefined outside every Run. */
function actingRun(home: string, env: NodeJS.ProcessEnv, verb: string): RunMeta | undefined {
  const unit = unitOfCaller(home, env, verb, {foreignUnitIsOutside: true})
  if (unit) return readRunMetaById(home, unit.run)
  const run = env.ACTORS_RUN
  if (!run || !env.ACTORS_RUN_INSTANCE || !isPlainName(run)) return undefined
  try {
    const meta = readRunMetaById(home, run)
    return meta?.run_instance_id === env.ACTORS_RUN_INSTANCE ? meta : undefined
  } catch {
    return undefined
  }
}

/**
 * Refuse (exit 5, nothing done) `verb` on the Run `ref` when the caller runs
 * inside a Run of another owner and is not of the target's tree. A `ref`
 * that names no readable Run is left to the command, which says so itself.
 */
export function checkActAuthority(home: string, ref: string, verb: string, env = process.env): void {
  const caller = actingRun(home, env, verb)
  if (!caller) return
  let target: RunMeta | undefined
  try {
    target = readRunMetaById(home, resolveRunRef(home, ref))
  } catch {
    return
  }
  if (!target || isInTreeOf(home, caller, target.run)) return
  const owner = typeof caller.owner === 'string' ? caller.owner : 'default'
  const targetOwner = typeof target.owner === 'string' ? target.owner : 'default'
  if (owner === targetOwner) return
  throw refusedError(
    `Run ${target.run} belongs to owner ${targetOwner}; this caller runs inside Run ${caller.run} of owner ${owner} and is not of its tree, so it cannot ${verb} it`,
    `${verb} it from outside every Run, or from a Run of owner ${targetOwner}`,
    {run: target.run, owner: targetOwner, caller_owner: owner},
  )
}
