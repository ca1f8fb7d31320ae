/**
 * From "what the user asked for" to a launched Run, for `actors run` and the
 * MCP `run` tool alike: a Recipe found under the recipe roots with its
 * NAME=VALUE words, or an ad-hoc argv (a PreparedLaunch); then bind the
 * values with the runtime values, apply command-line overrides and lineage,
 * check the launch against its tree (admission.ts) and create the Run
 * (launch.ts), queued under its parent's max-parallel cap when that is full.
 * This is the one place where launch-time policy (limits, singletons,
 * queueing) plugs in.
 */
import {limitFlags} from '../../kernel/containment/limits.js'
import type {UnitLimits} from '../../kernel/containment/unit.js'
import {existsSync, statSync} from 'node:fs'
import {resolve, sep} from 'node:path'
import {usageError} from '../../base/platform/errors.js'
import {parsePositiveDuration} from '../../base/platform/duration.js'
import {findRecipe, recipeRoots, resolveRecipe, type Recipe} from '../../kernel/recipes/index.js'
import {resolveAdHoc} from './ad-hoc.js'
import {recipeError} from '../../kernel/recipes/load.js'
import {validateRunId, runDir} from '../../base/platform/home.js'
import {launchRun, makeRunId, RunIdTaken, type LaunchResult, type LaunchSpec} from './launch.js'
import {launchSingleton} from './singleton.js'
import {callerLineage, type Lineage} from '../../kernel/runs/lineage.js'
import {nextLineageId} from './lineage-id.js'
import {forkSeed, parseForkFlag, type ForkRequest, type ForkSeed} from './fork.js'
import {admitToTree} from './admission.js'
import {applyTreePolicy} from './tree-policy.js'
import type {PolicyRule} from '../../base/records/run.js'
import {launchChild} from './child-queue.js'
import {chooseExecutor} from '../../kernel/executors/index.js'
import {executorNamed} from '../../kernel/executors/index.js'
import type {ResolvedRecipe, RuntimeValues} from '../../kernel/recipes/types.js'

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
  /** An `actors mcp` server's launch policy, recorded in the Run and held down its tree (tree-policy.ts). */
  policy?: PolicyRule[]
  /** `run --fork[=N]`: start with the parent's last N inbox messages (fork.ts). */
  fork?: ForkRequest
}

/** An ad-hoc command (`actors run -- COMMAND ARG...`): the argv exactly as given. */
export function prepareAdHoc(command: string[]): PreparedLaunch {
  return {idHint: command[0] ?? 'run', recipe: null, recipeFile: null, resolve: () => resolveAdHoc(command)}
}

/** Find Recipe `name` (or a path to a Recipe file) under the roots of `home` (and `--recipes`). */
export function findLaunchRecipe(home: string, name: string, recipesFlag?: string): Recipe {
  return findRecipe(name, recipeRoots({recipesFlag, home}))
}

/** A found Recipe with its `NAME=VALUE` words (validated when the Run id is known). */
export function prepareRecipe(recipe: Recipe, values: string[]): PreparedLaunch {
  return {
    idHint: recipe.name,
    recipe: recipe.name,
    recipeFile: recipe.file,
    resolve: (runtime) => resolveRecipe(recipe, values, runtime),
  }
}

/** The command-line overrides of a launch, from `run`'s flags (durations as text, e.g. `10m`). */
export function launchOverrides(flags: {
  name?: string
  cwd?: string
  timeout?: string
  retry?: number
  silent?: boolean
  'max-parallel'?: number
  'budget-tokens'?: number
  on?: string
  inbox?: string
  memory?: string
  cpus?: string
  pids?: number
  fork?: string | number | boolean
}): LaunchOverrides {
  return {
    name: flags.name,
    cwd: flags.cwd,
    timeoutMs: flags.timeout === undefined ? undefined : parsePositiveDuration(flags.timeout, '--timeout'),
    retry: flags.retry,
    silent: flags.silent,
    maxParallel: flags['max-parallel'],
    budgetTokens: flags['budget-tokens'],
    on: flags.on,
    inbox: parseInboxFlag(flags.inbox),
    limits: limitFlags(flags), // [containment]
    fork: parseForkFlag(flags.fork),
  }
}

/** `--inbox stdin|file` (SPEC: Generations and steering); anything else is a usage error. */
function parseInboxFlag(value: string | undefined): 'stdin' | 'file' | undefined {
  if (value === undefined || value === 'stdin' || value === 'file') return value
  throw usageError(
    `--inbox ${JSON.stringify(value)} is not stdin or file`,
    '--inbox stdin (messages arrive as lines on stdin) or --inbox file (read them with `actors inbox`)',
  )
}

/** Validate everything, then launch. Nothing is created on disk until validation passed. */
export function launchPrepared(home: string, prepared: PreparedLaunch, overrides: LaunchOverrides): LaunchResult {
  const explicitId = overrides.name !== undefined
  const lineage = callerLineage(home)
  // Read once, before any id is tried: every try seeds the same messages.
  const seed = overrides.fork === undefined ? undefined : forkSeed(lineage, overrides.fork)
  let taken = 0
  for (let tries = 0; ; tries++) {
    // Inside a Run an unnamed child is PARENT.N (lineage-id.ts); elsewhere the hint and a random suffix.
    const child = explicitId || !lineage.parent ? undefined : nextLineageId(lineage.parent, taken)
    const runId = explicitId ? validateNewRunName(overrides.name!) : (child?.id ?? makeRunId(prepared.idHint))
    try {
      return launchOnce(home, prepared, overrides, runId, explicitId, lineage, seed)
    } catch (error) {
      // A generated id collided with an existing Run: pick another (templates use the id); a lineage id moves to the next N.
      if (!(error instanceof RunIdTaken) || tries > (child ? 1000 : 5)) throw error
      if (child) taken = child.n
    }
  }
}

function launchOnce(
  home: string,
  prepared: PreparedLaunch,
  overrides: LaunchOverrides,
  runId: string,
  explicitId: boolean,
  lineage: Lineage,
  seed: ForkSeed | undefined,
): LaunchResult {
  const resolved = prepared.resolve({run_id: runId, state_dir: runDir(home, runId)})
  const cwd = resolve(overrides.cwd ?? resolved.cwd ?? process.cwd())
  requireWorkingDir(cwd, overrides.cwd !== undefined ? null : prepared.recipeFile, runDir(home, runId))
  const executor = chooseExecutor(overrides.on, resolved.executor)
  // [containment] Limits need a cgroup: the executor refuses them here, before anything starts, where none can be made.
  const limits = {...resolved.limits, ...overrides.limits}
  executorNamed(executor.kind).preflight(limits)
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
    // A forked child without an inbox of its own reads its seed with `actors inbox`.
    inbox: overrides.inbox ?? resolved.inbox ?? (seed ? 'file' : undefined),
    resume: resolved.resume,
    owner: lineage.owner,
    parent: lineage.parent,
    root: lineage.root,
    depth: lineage.depth,
    executor,
    ...(Object.keys(limits).length ? {limits} : {}),
    ...(overrides.policy ? {policy: overrides.policy} : {}),
    ...(seed ? {seed} : {}),
  }
  // Depth and budget refusals first, then the parent's max-parallel queue and its children journal.
  const launch = () => launchInTree(spec)
  // A live Run of a singleton Recipe is reused (equal values) or refused (exit 5).
  if (spec.singleton && spec.recipe) return launchSingleton(home, spec.recipe, spec.values, launch)
  return launch()
}

/**
 * Create the Run `spec` describes where admission places it in its tree: a
 * root at once, a child through its parent's max-parallel queue.
 */
export function launchInTree(spec: LaunchSpec): LaunchResult {
  const admitted = admitToTree(spec)
  // The policy of the tree it joins (read from the ancestors' run.json), after the limits; refusals exit 5.
  const placed = applyTreePolicy(admitted.spec)
  return admitted.parentDir ? launchChild(admitted.parentDir, placed) : launchRun(placed)
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
  if (recipeFile)
    throw recipeError(
      recipeFile,
      'cwd',
      `renders to ${problem}`,
      "create the directory first, or fix the Recipe's cwd (--cwd DIR overrides it)",
    )
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
    throw usageError(
      `--name ${JSON.stringify(name)} starts with "${name[0]}"`,
      'start the Run id with a letter, digit or "_", e.g. build-1',
    )
  }
  return name
}
