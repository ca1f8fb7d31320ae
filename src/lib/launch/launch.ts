/**
 * Creating a Run: claim its state dir, write a durable run.json, start the
 * detached supervisor and record its identity. Returns as soon as the
 * supervisor process exists; the supervisor fills in the command's pids.
 */
import {childProcess, isoTime, randomHex, randomUuid} from '../platform/builtins.js'
import {statSync} from 'node:fs'
import {refusedError, usageError} from '../platform/errors.js'
import {ensureHome, runDir, validateRunId} from '../platform/home.js'
import {withLockSync} from '../platform/lock.js'
import {notifyStateChange} from '../bell/notify.js'
import {supervisorScript} from '../platform/package-root.js'
import {supervisorEnvironment} from './supervisor-env.js'
import {submitSlurmRun} from '../executors/slurm-submit.js'
import {isSlurmRun} from '../executors/slurm.js'
import {readProcessIdentity} from '../platform/process-identity.js'
import {addIndexMarker, claimRunDirName} from '../runs/live-index.js'
import {readRunMetaRaw, readRunResult, readRunState, runFile, updateRunMeta} from '../runs/store.js'
import {startGenerationLocked} from '../generations/start.js'
import {adoptEarlierChildren} from '../steer/adopt-children.js'
import {MAX_JSON_BYTES, writeJsonAtomic} from '../platform/state-files.js'
import {RUN_SCHEMA, isTerminal, type ParentRef, type RunMeta} from '../runs/types.js'
import type {ResolvedRecipe} from '../recipes/types.js'

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
}

export interface LaunchResult {
  run: string
  run_instance_id: string
  state_dir: string
  status: string
  pid: number | null
  /** A Slurm Run: its executor record (job id) once submitted. */
  executor?: RunMeta['executor']
  /** Why the Run failed to start (a refused Slurm submission: sbatch's message). */
  error?: string
}

/** A readable, unique Run id: the hint's last path segment plus a short random suffix. */
export function makeRunId(hint: string): string {
  const base = hint.split('/').pop()!.replace(/[^A-Za-z0-9_.-]+/g, '-').replace(/^[.-]+/, '').slice(0, 40) || 'run'
  return `${base}-${randomHex(3)}`
}

/**
 * Remove the test-only fault-injection variables (ACTORS_TEST_*) from `env`, in
 * place. A fault is aimed at the supervisor a test launched itself; commands,
 * and supervisors that one starts on its own (queued Runs), must never inherit it.
 */
export function dropTestFaults(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  for (const name of Object.keys(env)) if (name.startsWith('ACTORS_TEST_')) delete env[name]
  return env
}

/** Thrown when a generated id is already taken; the caller picks another and re-renders. */
export class RunIdTaken extends Error {}

/** How long a state dir without run.json counts as being created by another launch. */
const CREATING_GRACE_MS = 30_000

/**
 * Claim the state dir for `id` and write the new generation's run.json, both
 * under the Run's lock, so two launches of one id can never both win. A fresh
 * id gets a new directory (mkdir is the atomic claim); an existing id may be
 * relaunched only when the user chose it and its Run is terminal, and then its
 * previous generation's files move to generations/<n>/ (generations/start.ts).
 */
function claimRunDir(spec: LaunchSpec, id: string): {dir: string; meta: RunMeta} {
  const {dir, fresh} = claimRunDirName(spec.home, id)
  if (!fresh) {
    if (!spec.explicitId) throw new RunIdTaken(id)
    // Settle a Run whose supervisor vanished first: reconciliation takes the lock itself (not reentrant).
    readRunState(dir)
  }
  return withLockSync(runFile(dir, 'lock'), () => {
    if (!fresh) {
      const meta = readRunMetaRaw(dir)
      const live = meta && !isTerminal(meta.status) && !readRunResult(dir, meta)
      if (meta && live) {
        throw refusedError(`Run ${id} is still ${meta.status}`, `stop it first (actors control ${id} stop) or pick another --name`)
      }
      // No run.json yet: another launch made the directory a moment ago and is writing it.
      if (!meta && Date.now() - statSync(dir).ctimeMs < CREATING_GRACE_MS) {
        throw refusedError(`Run ${id} is being created by another launch`, 'pick another --name, or retry in a moment')
      }
      // An earlier generation: archived to generations/<n>/, and the new one's run.json written (crash-safe).
      if (meta) return {dir, meta: startGenerationLocked(spec.home, dir, meta, (generation) => newRunMeta(spec, id, dir, generation))}
    }
    const meta = newRunMeta(spec, id, dir, 1)
    // In the run index before run.json exists, so before the Run can end: live commands find it from now on.
    addIndexMarker(spec.home, id, meta.run_instance_id)
    writeJsonAtomic(runFile(dir, 'meta'), meta)
    return {dir, meta}
  })
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
    // A Slurm Run waits as queued until its job starts the supervisor on a node;
    // [locks] a Run with Recipe locks starts queued, waiting for them (its supervisor takes them).
    status: spec.queued || spec.locks?.length || spec.executor?.kind === 'slurm' ? 'queued' : 'running',
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
    ...(spec.inbox ? {inbox: spec.inbox} : {}),
    ...(spec.limits ? {limits: spec.limits} : {}),
    ...(spec.resume === false ? {resume: false} : {}),
    ...(spec.message ? {message: spec.message} : {}),
    generation,
    // Waking attention events of this Run raise attention.flag (runs/trace.ts): a wait reads only flagged Traces.
    attention_flag: true,
    state_dir: dir,
    executor: spec.executor ?? {kind: 'local'},
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

/** Create the Run's files and, unless it is queued, start its supervisor. */
export function launchRun(spec: LaunchSpec): LaunchResult {
  ensureHome(spec.home)
  const id = validateRunId(spec.id)
  refuseOversizedMeta(spec, id)
  const {dir, meta} = claimRunDir(spec, id)
  // A new generation of a parent takes over its earlier generations' live children.
  if (meta.generation !== undefined && meta.generation > 1) adoptEarlierChildren(spec.home, dir, meta)
  if (spec.queued) {
    notifyStateChange(spec.home)
    return {run: id, run_instance_id: meta.run_instance_id, state_dir: dir, status: meta.status, pid: null}
  }
  const started = startRun(spec.home, dir, meta)
  notifyStateChange(spec.home)
  return {run: id, run_instance_id: meta.run_instance_id, state_dir: dir, status: meta.status, pid: null, ...started}
}

/**
 * Start a created Run through its executor: a local supervisor process, or a
 * Slurm job (executors/slurm-submit.ts; a refused submission settles the Run
 * as failed). Used for fresh Runs and for queued children whose slot freed.
 */
export function startRun(home: string, dir: string, created?: RunMeta): Partial<LaunchResult> {
  // A launch passes the run.json it just wrote (its executor cannot have changed since): one read fewer.
  const meta = created ?? readRunMetaRaw(dir)
  if (meta && isSlurmRun(meta)) return submitSlurmRun(home, dir)
  return {pid: startSupervisor(home, dir)}
}

/**
 * Start the detached supervisor for the Run in `dir` (fresh, or queued and now
 * allowed to run) and record its pid and process identity in run.json.
 */
export function startSupervisor(home: string, dir: string): number {
  const env = supervisorEnvironment(home)
  // A supervisor starting a queued Run passes on no fault meant for itself.
  if (process.env.ACTORS_SUPERVISOR === '1') dropTestFaults(env)
  const child = childProcess().spawn(process.execPath, [supervisorScript(), dir], {detached: true, stdio: 'ignore', env})
  child.unref()
  const pid = child.pid
  if (pid === undefined) throw new Error(`could not start the supervisor for ${dir}`)
  const identity = readProcessIdentity(pid)
  // Not fsynced: after a crash of the machine this pid and identity name nothing, and a Run whose
  // identity was never recorded is settled as lost after the launch grace (executors/local.ts).
  updateRunMeta(
    dir,
    (meta) => ({
      ...meta,
      status: meta.status === 'queued' && !meta.waiting_for ? 'running' : meta.status, // [locks] still waiting for its locks
      pid: meta.pid ?? pid,
      process_identity: meta.process_identity ?? identity,
    }),
    {durable: false},
  )
  return pid
}
