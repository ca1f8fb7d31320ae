/**
 * From "what the user asked for" to a launched Run: bind the Recipe's values
 * (or the ad-hoc argv) with the runtime values, apply command-line overrides
 * and lineage, then hand a LaunchSpec to launchRun(). This is the one place
 * where launch-time policy (limits, singletons, queueing) plugs in.
 */
import {requireEnforceableLimits} from '../executors/containment/limits.js'
import type {UnitLimits} from '../executors/containment/unit.js'
import {existsSync, statSync} from 'node:fs'
import {resolve, sep} from 'node:path'
import {usageError} from '../platform/errors.js'
import {recipeError} from '../recipes/load.js'
import {validateRunId, runDir} from '../platform/home.js'
import {makeRunId, RunIdTaken, type LaunchResult, type LaunchSpec} from './launch.js'
import {launchSingleton} from '../control/singleton.js'
import {lineageFromEnv} from '../runs/lineage.js'
import {launchInTree} from '../tree/admission.js'
import {chooseExecutor} from '../executors/choice.js'
import {requireSlurmClient} from '../executors/slurm-submit.js'
import type {ResolvedRecipe, RuntimeValues} from '../recipes/types.js'

export interface PreparedLaunch {
  idHint: string
  recipe: string | null
  recipeFile: string | null
  /** Bind values and render templates once the Run id (and so its state dir) is known. */
  resolve: (runtime: RuntimeValues) => ResolvedRecipe
}

export interface LaunchOverrides {
  name?: string
  cwd?: string
  timeoutMs?: number
  retry?: number
  silent?: boolean
  maxParallel?: number
  budgetTokens?: number
  /** `--on`: the executor (SPEC: Executors); validated here. */
  on?: string
  /** `run --inbox stdin|file`: make an ad-hoc Run steerable with `actors send`. */
  inbox?: 'stdin' | 'file'
  /** `run --memory/--cpus/--pids`: each overrides the Recipe's limit of that kind. */
  limits?: UnitLimits
}

/** Validate everything, then launch. Nothing is created on disk until validation passed. */
export function launchPrepared(home: string, prepared: PreparedLaunch, overrides: LaunchOverrides): LaunchResult {
  const explicitId = overrides.name !== undefined
  for (let tries = 0; ; tries++) {
    const runId = explicitId ? validateNewRunName(overrides.name!) : makeRunId(prepared.idHint)
    try {
      return launchOnce(home, prepared, overrides, runId, explicitId)
    } catch (error) {
      // A generated id collided with an existing Run: pick another (templates use the id).
      if (!(error instanceof RunIdTaken) || tries > 5) throw error
    }
  }
}

function launchOnce(home: string, prepared: PreparedLaunch, overrides: LaunchOverrides, runId: string, explicitId: boolean): LaunchResult {
  const resolved = prepared.resolve({run_id: runId, state_dir: runDir(home, runId)})
  const lineage = lineageFromEnv()
  const cwd = resolve(overrides.cwd ?? resolved.cwd ?? process.cwd())
  requireWorkingDir(cwd, overrides.cwd !== undefined ? null : prepared.recipeFile, runDir(home, runId))
  const executor = chooseExecutor(overrides.on, resolved.executor)
  if (executor.kind === 'slurm') requireSlurmClient()
  // [containment] Limits need a cgroup: refused here, before anything starts, where none can be made.
  const limits = {...resolved.limits, ...overrides.limits}
  if (executor.kind !== 'slurm') requireEnforceableLimits(limits)
  const spec: LaunchSpec = {
    home,
    id: runId,
    explicitId,
    recipe: prepared.recipe,
    recipeFile: prepared.recipeFile,
    values: resolved.values,
    plan: resolved.plan,
    cwd,
    env: resolved.env,
    timeoutMs: overrides.timeoutMs ?? resolved.timeoutMs,
    retry: overrides.retry ?? resolved.retry,
    killGraceMs: resolved.killGraceMs,
    control: resolved.control,
    artifacts: resolved.artifacts,
    notification: overrides.silent ? 'silent' : resolved.notification,
    singleton: resolved.singleton,
    ...(resolved.locks ? {locks: resolved.locks} : {}), // [locks]
    maxParallel: overrides.maxParallel,
    budgetTokens: overrides.budgetTokens,
    inbox: overrides.inbox ?? resolved.inbox,
    resume: resolved.resume,
    owner: lineage.owner,
    parent: lineage.parent,
    root: lineage.root,
    depth: lineage.depth,
    executor,
    ...(Object.keys(limits).length ? {limits} : {}),
  }
  // Depth and budget refusals, the parent's max-parallel queue and its children journal.
  const launch = () => launchInTree(spec)
  // A live Run of a singleton Recipe is reused (equal values) or refused (exit 5).
  if (spec.singleton && spec.recipe) return launchSingleton(home, spec.recipe, spec.values, launch)
  return launch()
}

/**
 * Refuse a working directory that does not exist before anything starts (the
 * command would otherwise fail to spawn with a misleading "ENOENT" for its
 * program). A cwd inside the Run's own state dir is allowed: it appears at launch.
 */
function requireWorkingDir(cwd: string, recipeFile: string | null, stateDir: string): void {
  if (cwd === stateDir || cwd.startsWith(stateDir + sep)) return
  let isDir = false
  try {
    isDir = statSync(cwd).isDirectory()
  } catch {}
  if (isDir) return
  const problem = `${cwd} ${existsSync(cwd) ? 'is not a directory' : 'does not exist'}`
  if (recipeFile) throw recipeError(recipeFile, 'cwd', `renders to ${problem}`, 'create the directory first, or fix the Recipe\'s cwd (--cwd DIR overrides it)')
  throw usageError(`--cwd ${problem}`, 'pass an existing directory')
}

/**
 * A new Run's --name: the Run id pattern, and not starting with "." (listings
 * skip dot-names: the Run would be invisible to inspect, wait and prune) or
 * "-" (every later command would read it as a flag).
 */
function validateNewRunName(name: string): string {
  validateRunId(name, '--name')
  if (name.startsWith('.') || name.startsWith('-')) {
    throw usageError(`--name ${JSON.stringify(name)} starts with "${name[0]}"`, 'start the Run id with a letter, digit or "_", e.g. build-1')
  }
  return name
}
