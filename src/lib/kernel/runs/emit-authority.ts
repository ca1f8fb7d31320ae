/**
 * Who may append to a Run's Trace (SPEC: Authority over files and Runs): a
 * process of the Run's own tree, or a caller with the Run's owner. Lineage is
 * taken from the environment only as a claim, then checked against the
 * run.json files of the state root, so setting ACTORS_RUN by hand proves
 * nothing. Events for a finished Run are refused: its Trace and usage are
 * closed with its result.
 */
import {notActiveError, refusedError} from '../../base/platform/errors.js'
import {isPlainName} from '../../base/platform/home.js'
import {ancestorMetas} from './ancestors.js'
import {unitOfCaller} from './lineage.js'
import {readRunMetaById, type RunState} from './store.js'
import {isTerminal, type RunMeta} from '../../base/records/run.js'

/**
 * The Run the caller runs in: inside a Run's unit, that Run (unit-lineage.ts;
 * a lineage variable naming another Run, or a unit that is no live Run of
 * this state root, is refused, exit 5); elsewhere, when its environment's
 * lineage names a Run of this state root whose current instance is
 * ACTORS_RUN_INSTANCE; undefined otherwise (outside a Run, another root, a
 * stale or forged instance).
 */
export function verifiedCallerRun(home: string, env: NodeJS.ProcessEnv): RunMeta | undefined {
  const unit = unitOfCaller(home, env, 'emit')
  if (unit) return readRunMetaById(home, unit.run)
  const run = env.ACTORS_RUN
  const instance = env.ACTORS_RUN_INSTANCE
  if (!run || !instance || !isPlainName(run)) return undefined
  try {
    const meta = readRunMetaById(home, run)
    return meta && meta.run_instance_id === instance ? meta : undefined
  } catch {
    return undefined
  }
}

/** Whether the Run `caller` is `target` or one of its descendants, following parent links through run.json. */
export function isInTreeOf(home: string, caller: RunMeta, target: string): boolean {
  return caller.run === target || ancestorMetas(home, caller).some((ancestor) => ancestor.run === target)
}

/**
 * The owner a caller acts for: its verified Run's recorded owner inside a
 * tree, else ACTORS_OWNER, else "default". A caller whose lineage variables
 * claim a Run that does not verify (a process of an earlier launch, a forged
 * claim) acts for no owner: ACTORS_OWNER is not believed from inside a Run.
 */
export function callerOwner(caller: RunMeta | undefined, env: NodeJS.ProcessEnv): string | undefined {
  if (caller && typeof caller.owner === 'string') return caller.owner
  if (!caller && (env.ACTORS_RUN || env.ACTORS_RUN_INSTANCE || env.ACTORS_STATE_DIR)) return undefined
  return env.ACTORS_OWNER || 'default'
}

/**
 * Refuse an event for `target` unless the caller is of its tree or has its
 * owner (exit 5, checked first so a stranger learns nothing of the Run's
 * state), and refuse one for a Run that has ended (exit 3).
 */
export function checkEmitAuthority(home: string, target: RunState, env: NodeJS.ProcessEnv = process.env): void {
  const caller = verifiedCallerRun(home, env)
  const inTree = caller !== undefined && isInTreeOf(home, caller, target.meta.run)
  const targetOwner = typeof target.meta.owner === 'string' ? target.meta.owner : 'default'
  const owner = callerOwner(caller, env)
  if (!inTree && owner !== targetOwner) {
    const actsFor = owner === undefined ? 'claims a Run it does not run in' : `acts for ${owner}`
    throw refusedError(
      `Run ${target.meta.run} belongs to owner ${targetOwner}; this caller ${actsFor} and is not a process of its tree`,
      `emit from inside Run ${target.meta.run} (or a Run below it), or as its owner (ACTORS_OWNER=${targetOwner} outside any Run)`,
      {run: target.meta.run, owner: targetOwner, caller_owner: owner ?? null},
    )
  }
  if (isTerminal(target.meta.status) || target.result) {
    throw notActiveError(
      `Run ${target.meta.run} has ended (${target.result?.status ?? target.meta.status}); its Trace and usage take no more events`,
      'emit while the Run is live; a finished Run is resumed with `actors send RUN MESSAGE` or `actors rerun RUN`',
      {run: target.meta.run, status: target.result?.status ?? target.meta.status},
    )
  }
}
