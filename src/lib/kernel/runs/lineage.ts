/**
 * Who is launching: the owner and, inside a Run, the parent Run (SPEC: Trees,
 * owners and limits). Inside a Run's unit the unit decides (unit-lineage.ts)
 * and the variables the supervisor gives every command must agree with it;
 * elsewhere those variables are the claim, checked against run.json later.
 */
import {dirname} from 'node:path'
import {notActiveError, refusedError, usageError} from '../../base/platform/errors.js'
import {isPlainName, sameStateDir} from '../../base/platform/home.js'
import {readRunMetaById, requireRun, type RunState} from './store.js'
import type {ParentRef} from '../../base/records/run.js'
import {callerUnit, type CallerUnit} from './unit-lineage.js'

/**
 * The lineage variables: what the supervisor tells every command about its
 * Run (supervisor/outcome.ts sets each one), and so what a new supervisor
 * must never inherit from the caller's Run (executors/supervisor-env.ts).
 */
export const LINEAGE_VARS = [
  'ACTORS_RUN',
  'ACTORS_RUN_INSTANCE',
  'ACTORS_STATE_DIR',
  'ACTORS_ROOT',
  'ACTORS_DEPTH',
  'ACTORS_OWNER',
  'ACTORS_GENERATION',
  'ACTORS_MESSAGE',
] as const

/** One of LINEAGE_VARS. */
export type LineageVar = (typeof LINEAGE_VARS)[number]

/** How a command that only works inside a Run words its refusals. */
export interface OwnRunWording {
  /** The command, as in "emit must be called from inside a Run". */
  command: string
  /** The fix when called outside a Run. */
  outsideFix: string
  /** The fix for a process of an earlier launch of the Run. */
  staleFix: string
}

/**
 * The Run this process runs in: given the state root, the Run of the unit it
 * is inside (unitOfCaller); elsewhere the one the variables the supervisor
 * sets name (ACTORS_STATE_DIR, ACTORS_RUN, ACTORS_RUN_INSTANCE): exit 2
 * outside a Run, 3 for a process of an earlier launch (the Run id now names
 * another instance).
 */
export function resolveOwnRun(
  wording: OwnRunWording,
  env: NodeJS.ProcessEnv = process.env,
  stateRoot?: string,
): {home: string; state: RunState; instance: string} {
  // The unit decides where it can be seen; the variables below only outside every unit.
  const unit = stateRoot === undefined ? undefined : unitOfCaller(stateRoot, env, wording.command)
  if (unit) return {home: stateRoot!, state: requireRun(stateRoot!, unit.run), instance: unit.run_instance_id}
  const stateDir = env.ACTORS_STATE_DIR
  const instance = env.ACTORS_RUN_INSTANCE
  if (!stateDir || !instance || !env.ACTORS_RUN) {
    throw usageError(
      `${wording.command} must be called from inside a Run (ACTORS_STATE_DIR, ACTORS_RUN and ACTORS_RUN_INSTANCE are not set)`,
      wording.outsideFix,
    )
  }
  const home = env.ACTORS_HOME ?? dirname(dirname(stateDir))
  const state = requireRun(home, env.ACTORS_RUN)
  if (state.meta.run_instance_id !== instance) {
    throw notActiveError(
      `Run ${env.ACTORS_RUN} is now instance ${state.meta.run_instance_id}, not ${instance}`,
      wording.staleFix,
    )
  }
  return {home, state, instance}
}

export interface Lineage {
  owner: string
  parent?: ParentRef
  root?: string
  depth: number
  /** The parent was found from the caller's unit (callerLineage), not taken from the environment's claim. */
  fromUnit?: boolean
}

/** Refuse owner names that could escape the delivery directory (`$ACTORS_HOME/delivery/<owner>.json`). */
export function validateOwner(owner: string): string {
  if (!isPlainName(owner)) {
    throw usageError(
      `ACTORS_OWNER ${JSON.stringify(owner.slice(0, 80))} is not a valid owner name`,
      'use letters, digits, "_", "." and "-" only, e.g. ACTORS_OWNER=review-bot',
    )
  }
  return owner
}

/**
 * The lineage of a new Run that this process launches into `home`: inside a
 * Run's unit, that Run is the parent whatever the environment says (a
 * cleared environment gets it back; a contradicting one is refused, exit 5);
 * elsewhere the environment's claim, as lineageFromEnv reads it.
 */
export function callerLineage(home: string, env: NodeJS.ProcessEnv = process.env): Lineage {
  const parent = unitOfCaller(home, env, 'this launch')
  if (!parent) return lineageFromEnv(env)
  const owner = validateOwner(env.ACTORS_OWNER || 'default')
  // Root and depth are the parent's record's (admission.ts reads them again): placeholders until then.
  return {owner, parent, root: parent.run, depth: 1, fromUnit: true}
}

/**
 * The Run this process runs in as its unit shows it (unit-lineage.ts), or
 * undefined outside every unit. Refused (exit 5) when the unit is not a
 * current Run of `home`, or when a lineage variable names another Run.
 */
export function unitOfCaller(
  home: string,
  env: NodeJS.ProcessEnv,
  what: string,
  options: {foreignUnitIsOutside?: boolean} = {},
): ParentRef | undefined {
  const unit = callerUnit(home, env)
  if (!unit) return undefined
  if (unit.kind === 'unknown') {
    // A unit that is no live Run of this root (a Run of another state root, say) has no tree here to act from.
    if (options.foreignUnitIsOutside) return undefined
    // A process of an earlier launch of its Run keeps its old lineage: the instance check refuses it (exit 3).
    if (unit.instance && env.ACTORS_RUN && env.ACTORS_RUN_INSTANCE === unit.instance) return undefined
    throw refusedError(
      `${what} is refused: this process runs inside a Run's unit (${unit.evidence}) that is not a live Run of the state root ${home}`,
      'act from the Run with the state root it was launched in (its ACTORS_HOME), or from outside every Run',
      {run_instance_id: unit.instance ?? null},
    )
  }
  refuseContradiction(unit, env, what)
  return unit.ref
}

/** Each lineage variable that is set must name the unit's Run (exit 5, naming the variable and both Runs). */
function refuseContradiction(unit: Extract<CallerUnit, {kind: 'run'}>, env: NodeJS.ProcessEnv, what: string): void {
  const same = (a: string, b: string) => a === b
  const expected: Array<[string, string, (claimed: string, actual: string) => boolean]> = [
    ['ACTORS_RUN', unit.ref.run, same],
    ['ACTORS_RUN_INSTANCE', unit.ref.run_instance_id, same],
    // The same dir by another spelling of the state root (a linked ACTORS_HOME) is the same Run, not another.
    ['ACTORS_STATE_DIR', unit.ref.state_dir, sameStateDir],
  ]
  for (const [name, actual, agrees] of expected) {
    const claimed = env[name]
    if (claimed === undefined || claimed === '' || agrees(claimed, actual)) continue
    throw refusedError(
      `${what} is refused: ${name}=${JSON.stringify(claimed.slice(0, 200))} says this process runs in another Run, but it runs inside Run ${unit.ref.run} (${unit.evidence}), where ${name} is ${actual}`,
      `act with the environment Run ${unit.ref.run} gave its command, or unset the lineage variables: inside a Run the Run is found from its unit`,
      {variable: name, claimed, run: unit.ref.run, run_instance_id: unit.ref.run_instance_id},
    )
  }
}

/** The lineage of a new Run launched from an environment `env` (outside every Run's unit: callerLineage). */
export function lineageFromEnv(env: NodeJS.ProcessEnv = process.env): Lineage {
  // Validated here so a Run whose owner no `wait` could ever collect is refused before it starts.
  const owner = validateOwner(env.ACTORS_OWNER || 'default')
  const run = env.ACTORS_RUN
  const instance = env.ACTORS_RUN_INSTANCE
  const stateDir = env.ACTORS_STATE_DIR
  const present = [run, instance, stateDir].filter((v) => v !== undefined && v !== '').length
  if (present === 0) return {owner, depth: 0}
  if (present < 3) {
    throw usageError(
      'lineage is incomplete: ACTORS_RUN, ACTORS_RUN_INSTANCE and ACTORS_STATE_DIR must all be set inside a Run',
      'unset all three to launch a top-level Run, or launch from inside a Run started by actors',
    )
  }
  const parentDepth = Number(env.ACTORS_DEPTH ?? '0')
  return {
    owner,
    parent: {run: run!, run_instance_id: instance!, state_dir: stateDir!},
    root: env.ACTORS_ROOT || run,
    depth: (Number.isInteger(parentDepth) && parentDepth >= 0 ? parentDepth : 0) + 1,
  }
}

/**
 * The owner a command inside a tree acts for: the Run it runs in records its
 * tree's owner, and that wins over ACTORS_OWNER (which any process can
 * change), so no part of a tree can leave its root's `wait`. Outside a Run:
 * ACTORS_OWNER, else "default".
 */
export function treeOwner(home: string, lineage: Lineage): string {
  if (!lineage.parent) return lineage.owner
  try {
    const owner = readRunMetaById(home, lineage.parent.run)?.owner
    if (typeof owner === 'string' && isPlainName(owner)) return owner
  } catch {}
  return lineage.owner
}
