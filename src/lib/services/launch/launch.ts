/**
 * Creating a Run: claim its state dir, write a durable run.json, start the
 * detached supervisor and record its identity. Returns as soon as the
 * supervisor process exists; the supervisor fills in the command's pids.
 */
import {isoTime, randomHex, randomUuid} from '../../base/platform/builtins.js'
import {isBeingCreated, retryWhenCreated} from '../../kernel/runs/abandoned.js'
import {notActiveError, refusedError, usageError} from '../../base/platform/errors.js'
import {livePidsOfEnded} from '../../kernel/containment/unit-facts.js'
import {ensureHome, runDir, validateRunId} from '../../base/platform/home.js'
import {withLockSync} from '../../base/platform/file-lock.js'
import {notifyStateChange} from '../../base/bell/notify.js'
import {executorNamed, executorOf, THIS_MACHINE} from '../../kernel/executors/index.js'
import {claimRunDirName} from '../../kernel/history/live-index.js'
import {readRunMetaRaw, readRunResult, readRunState, runFile, writeNewRunLocked} from '../../kernel/runs/store.js'
import {refuseClosed} from '../../kernel/runs/closed.js'
import {startGenerationLocked} from './generation-start.js'
import {adoptEarlierChildren} from './adopt-children.js'
import {seedChild, type ForkSeed} from './fork.js'
import {MAX_JSON_BYTES} from '../../base/platform/state-files.js'
import {RUN_SCHEMA, isTerminal, type ParentRef, type PolicyRule, type RunMeta} from '../../base/records/run.js'
import type {ResolvedRecipe} from '../../kernel/recipes/types.js'

/**
 * Everything needed to launch a Run: a resolved Recipe (or ad-hoc command:
 * values, plan, env, limits) plus where and as what it launches.
 */
export interface LaunchSpec extends Omit<ResolvedRecipe, 'cwd' | 'singleton'> {
  home: string
  /** The Run id; templates were rendered with it. */
  id: string
  /** True when the user chose the id (`--name`): an existing terminal Run of that id is relaunched. */
  explicitId: boolean
  recipe: string | null
  recipeFile: string | null
  /** Resolved: the command's working directory. */
  cwd: string
  singleton?: boolean
  maxParallel?: number
  budgetTokens?: number
  /** The depth limit in force for this Run's tree below it (recorded as `max_depth`; runs/tightened-limits.ts). */
  maxDepth?: number
  /** The launch policy this Run is held to (launch/tree-policy.ts: its tree's rules plus an `actors mcp` server's). */
  policy?: PolicyRule[]
  /** Lineage, resolved by the caller from the environment. */
  owner: string
  parent?: ParentRef
  root?: string
  depth: number
  /** Create the Run as `queued` and do not start it (a parent's parallel cap is full). */
  queued?: boolean
  /** How `actors send` reaches the live Run (Recipe field `inbox`, `run --inbox`). */
  inbox?: 'stdin' | 'file'
  /** false: `actors send` may not resume the finished Run. */
  resume?: boolean
  /** The message a resumed generation starts with (ACTORS_MESSAGE). */
  message?: {id: string; text: string}
  /** `--fork`: the parent's messages the child's inbox starts with (fork.ts). */
  seed?: ForkSeed
}

export interface LaunchResult {
  run: string
  run_instance_id: string
  state_dir: string
  status: string
  pid: number | null
  /** Which generation of the id this launch started (1 for a new id; more when `--name` reuses a finished one). */
  generation: number
  /** A Slurm Run: its executor record (job id) once submitted. */
  executor?: RunMeta['executor']
  /** Why the Run failed to start (a refused Slurm submission: sbatch's message). */
  error?: string
}

/** A readable, unique Run id: the hint's last path segment plus a short random suffix. */
export function makeRunId(hint: string): string {
  const base =
    hint
      .split('/')
      .pop()!
      .replace(/[^A-Za-z0-9_.-]+/g, '-')
      .replace(/^[.-]+/, '')
      .slice(0, 40) || 'run'
  return `${base}-${randomHex(3)}`
}

/** Thrown when a generated id is already taken; the caller picks another and re-renders. */
export class RunIdTaken extends Error {}

/**
 * Claim the state dir for `id` and write the new generation's run.json, both
 * under the Run's lock, so two launches of one id can never both win. A fresh
 * id gets a new directory (mkdir is the atomic claim); an existing id may be
 * relaunched only when the user chose it and its Run is terminal, and then its
 * previous generation's files move to generations/<n>/ (launch/generation-start.ts).
 * A dir left without run.json past its grace is abandoned and reclaimed (runs/abandoned.ts).
 */
function claimRunDir(spec: LaunchSpec, id: string): {dir: string; meta: RunMeta} {
  const {dir, fresh} = claimRunDirName(spec.home, id)
  if (!fresh) {
    if (!spec.explicitId) throw new RunIdTaken(id)
    // Settle a Run whose supervisor vanished first: reconciliation takes the lock itself (not reentrant).
    readRunState(dir)
    // No run.json yet: another launch made the directory a moment ago and is writing it. Judged before the lock,
    // whose file inside the dir would restart the dir's clock: a dir past its grace is abandoned, and reclaimed below.
    if (!readRunMetaRaw(dir) && isBeingCreated(dir)) {
      throw refusedError(
        `Run ${id} is being created by another launch`,
        `pick another --name, or ${retryWhenCreated(dir)}`,
      )
    }
  }
  return withLockSync(runFile(dir, 'lock'), () => {
    if (!fresh) {
      const meta = readRunMetaRaw(dir)
      refuseClosed(meta) // `actors close`: no new generation of this id (exit 5)
      const live = meta && !isTerminal(meta.status) && !readRunResult(dir, meta)
      if (meta && live) {
        throw refusedError(
          `Run ${id} is still ${meta.status}`,
          `stop it first (actors control ${id} stop) or pick another --name`,
        )
      }
      if (meta) refuseWhileEndedLives(id, dir, meta)
      // An earlier generation: archived to generations/<n>/, and the new one's run.json written (crash-safe).
      if (meta)
        return {
          dir,
          meta: seeded(
            spec,
            dir,
            startGenerationLocked(spec.home, dir, meta, (generation) => newRunMeta(spec, id, dir, generation)),
          ),
        }
    }
    const meta = newRunMeta(spec, id, dir, 1)
    writeNewRunLocked(spec.home, dir, meta)
    return {dir, meta: seeded(spec, dir, meta)}
  })
}

/**
 * A forked child's seed in its inbox and Trace (fork.ts seedChild), once its run.json is written (which archives an
 * earlier generation's Trace) and still under its Run lock, which a `send` needs: none can come first.
 */
function seeded(spec: LaunchSpec, dir: string, meta: RunMeta): RunMeta {
  if (spec.seed) seedChild(dir, meta, spec.seed)
  return meta
}

/** Build run.json for generation `generation` of the Run. */
function newRunMeta(spec: LaunchSpec, id: string, dir: string, generation: number): RunMeta {
  return {
    schema: RUN_SCHEMA,
    run: id,
    run_instance_id: randomUuid(),
    recipe: spec.recipe,
    recipe_file: spec.recipeFile,
    values: spec.values,
    argv: spec.plan.steps[0] ?? [],
    plan: spec.plan,
    cwd: spec.cwd,
    env: spec.env,
    created_at: isoTime(),
    // A Run whose executor starts it elsewhere (a Slurm job) waits as queued until its supervisor starts;
    // [locks] a Run with Recipe locks starts queued, waiting for them (its supervisor takes them).
    status: spec.queued || spec.locks?.length || executorNamed(spec.executor?.kind).startsQueued ? 'queued' : 'running',
    ...(spec.locks?.length ? {locks: spec.locks, waiting_for: spec.locks.map((l) => l.name)} : {}),
    owner: spec.owner,
    ...(spec.parent ? {parent: spec.parent} : {}),
    root: spec.root ?? id,
    depth: spec.depth,
    control: spec.control,
    notification: spec.notification,
    ...(spec.timeoutMs !== undefined ? {timeout_ms: spec.timeoutMs} : {}),
    retry: spec.retry,
    kill_grace_ms: spec.killGraceMs,
    ...(spec.artifacts ? {artifacts: spec.artifacts} : {}),
    ...(spec.singleton ? {singleton: true} : {}),
    ...(spec.maxParallel !== undefined ? {max_parallel: spec.maxParallel} : {}),
    ...(spec.budgetTokens !== undefined ? {budget_tokens: spec.budgetTokens} : {}),
    ...(spec.maxDepth !== undefined ? {max_depth: spec.maxDepth} : {}),
    ...(spec.policy?.length ? {policy: spec.policy} : {}),
    ...(spec.inbox ? {inbox: spec.inbox} : {}),
    ...(spec.limits ? {limits: spec.limits} : {}),
    ...(spec.resume === false ? {resume: false} : {}),
    ...(spec.message ? {message: spec.message} : {}),
    ...(spec.seed ? {seed: spec.seed.record} : {}),
    generation,
    // Waking attention events of this Run raise attention.flag (runs/trace.ts): a wait reads only flagged Traces.
    attention_flag: true,
    state_dir: dir,
    executor: spec.executor ?? {kind: THIS_MACHINE},
  }
}

/** Room left in run.json for what the supervisor adds later (pids, identities, times). */
const META_HEADROOM_BYTES = 64 * 1024

/**
 * Refuse, before anything is created, a launch whose run.json would be too
 * large to read back (huge values, argv or env): every later read would fail.
 */
function refuseOversizedMeta(spec: LaunchSpec, id: string): void {
  const bytes = Buffer.byteLength(JSON.stringify(newRunMeta(spec, id, runDir(spec.home, id), 1), null, 2))
  const limit = MAX_JSON_BYTES - META_HEADROOM_BYTES
  if (bytes > limit) {
    throw usageError(
      `the Run's values, argv and env are too large: its run.json would be ${bytes} bytes, over the ${limit}-byte limit`,
      'pass large data through a file (a path arg) instead of on the command line',
    )
  }
}

/**
 * Create the Run's files and, unless it is queued, start its supervisor.
 * `created`: told of the Run once its run.json is written, before it starts
 * (a parent's children journal records it there).
 */
export function launchRun(spec: LaunchSpec, created?: (dir: string, meta: RunMeta) => void): LaunchResult {
  ensureHome(spec.home)
  const id = validateRunId(spec.id)
  refuseOversizedMeta(spec, id)
  const {dir, meta} = claimRunDir(spec, id)
  created?.(dir, meta)
  // A new generation of a parent takes over its earlier generations' live children.
  if (meta.generation !== undefined && meta.generation > 1) adoptEarlierChildren(spec.home, dir, meta)
  if (spec.queued) {
    notifyStateChange(spec.home)
    return launchResult(id, dir, meta)
  }
  const started = startRun(spec.home, dir, meta)
  notifyStateChange(spec.home)
  return {...launchResult(id, dir, meta), ...started}
}

function launchResult(id: string, dir: string, meta: RunMeta): LaunchResult {
  return {
    run: id,
    run_instance_id: meta.run_instance_id,
    state_dir: dir,
    status: meta.status,
    pid: null,
    generation: meta.generation ?? 1,
  }
}

/**
 * Start a created Run through its executor (executors/): a local supervisor
 * process, or a Slurm job (a refused submission settles the Run as failed).
 * Used for fresh Runs and for queued children whose slot freed.
 */
export function startRun(home: string, dir: string, created?: RunMeta): Partial<LaunchResult> {
  // A launch passes the run.json it just wrote (its executor cannot have changed since): one read fewer.
  const meta = created ?? readRunMetaRaw(dir)
  return executorOf(meta).start(home, dir, meta)
}

/**
 * A generation whose end is recorded but whose processes live on (a Run that
 * killed its supervisor and wrote its own end) is not over: starting the
 * next one over it left those processes running, and a `kill` then ended
 * only the new generation (exit 3, as for any Run still live).
 */
function refuseWhileEndedLives(id: string, dir: string, meta: RunMeta): void {
  const live = livePidsOfEnded(dir, meta)
  if (live.length === 0) return
  throw notActiveError(
    `Run ${id} is recorded as ended, but processes of it still run (pid ${live.slice(0, 5).join(', ')})`,
    `end them first (actors control ${id} kill), then start it again`,
    {pids: live},
  )
}
