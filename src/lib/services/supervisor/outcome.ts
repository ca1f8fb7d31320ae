/**
 * What a supervised Run's command sees and what its end means: the
 * command's environment, and the status and reason a finished attempt
 * settles as (a stop, a lost lock, limits that cannot hold, a timeout, the
 * executor ending the job, or the exit code).
 */
import {executorOf} from '../../kernel/executors/index.js'
import {dropTestHooks} from '../../base/platform/test-hooks.js'
import {generationOf} from '../../base/records/generation-layout.js'
import type {RunMeta, RunResult, TerminalStatus} from '../../base/records/run.js'
import {collectArtifacts} from '../../kernel/runs/artifacts.js'
import type {LineageVar} from '../../kernel/runs/lineage.js'

export interface StepOutcome {
  exitCode: number | null
  signal: string | null
  spawnError?: string
}

export interface AttemptOutcome extends StepOutcome {
  timedOut: boolean
  /** The Run's Recipe locks could not be taken (a damaged lock file): it fails without running. */
  lockError?: string
  /** The Run's limits cannot be enforced on this machine: it fails without running. */
  unitError?: string
  /** Taken over from a lost supervisor, its unit ended with no recorded end (SPEC: Supervision): `exited`. */
  lost?: true
}

/**
 * The environment a Run's command sees: the caller's (`base`: this
 * supervisor's own, or the launcher's a host was handed), the Recipe's, and the
 * lineage variables. Test-only fault injection (ACTORS_TEST_*) is for this
 * supervisor alone: it never reaches the command, so nested Runs are not
 * slowed or paused by a fault their test aimed at the outer one.
 */
export function commandEnvironment(
  meta: RunMeta,
  home: string,
  dir: string,
  base: NodeJS.ProcessEnv = process.env,
): NodeJS.ProcessEnv {
  const binDir = base.ACTORS_BIN_DIR
  const path = binDir ? `${binDir}:${base.PATH ?? ''}` : base.PATH
  // Typed by LINEAGE_VARS, so a variable added there must be given a value here.
  const lineage: Record<LineageVar, string | undefined> = {
    ACTORS_RUN: meta.run,
    ACTORS_RUN_INSTANCE: meta.run_instance_id,
    ACTORS_STATE_DIR: dir,
    ACTORS_OWNER: meta.owner,
    ACTORS_ROOT: meta.root,
    ACTORS_DEPTH: String(meta.depth),
    ACTORS_GENERATION: String(generationOf(meta)),
    ACTORS_MESSAGE: meta.message?.text,
  }
  return dropTestHooks({
    ...base,
    ...meta.env,
    PATH: meta.env.PATH ?? path,
    ACTORS_HOME: home,
    ...lineage,
    ACTORS_BIN_DIR: undefined,
    ACTORS_SUPERVISOR: undefined,
  })
}

/** The status and reason a Run settles as after `outcome` (its run.json `meta` read under the Run's lock). */
export function endOf(meta: RunMeta, outcome: AttemptOutcome): {status: TerminalStatus; reason: string | null} {
  const ending = meta.ending
  if (ending) return {status: ending.status, reason: ending.status === 'killed' ? 'kill' : 'stop'}
  if (outcome.lockError) return {status: 'failed', reason: 'lock_failed'}
  if (outcome.unitError) return {status: 'failed', reason: 'limits_unavailable'}
  if (outcome.lost && !outcome.timedOut) return {status: 'exited', reason: 'supervisor_lost'}
  // The command may die of the executor's TERM (a Slurm time limit, scancel) before the supervisor's handler ran.
  const executorEnding =
    outcome.timedOut || outcome.exitCode === 0 ? undefined : executorOf(meta).supervisor.ending(meta)
  if (outcome.timedOut || executorEnding === 'timeout') return {status: 'failed', reason: 'timeout'}
  if (executorEnding === 'cancelled') return {status: 'cancelled', reason: 'stop'}
  if (outcome.exitCode === 0) return {status: 'done', reason: null}
  return {status: 'failed', reason: outcome.spawnError ? 'spawn_failed' : outcome.signal ? 'signal' : 'exit_code'}
}

/** The result.json of an attempt that ended with `outcome` (the unit's part and the budget mark are added by the caller). */
export function resultOf(meta: RunMeta, outcome: AttemptOutcome, attempts: number, startedAt: Date): RunResult {
  const {status, reason} = endOf(meta, outcome)
  const completed = new Date()
  const result: RunResult = {
    status,
    exit_code: outcome.exitCode,
    signal: outcome.signal,
    reason,
    attempts,
    started_at: startedAt.toISOString(),
    completed_at: completed.toISOString(),
    duration_ms: completed.getTime() - startedAt.getTime(),
    artifacts: collectArtifacts(meta.artifacts, meta.cwd),
    run_instance_id: meta.run_instance_id,
  }
  const error = outcome.spawnError ?? outcome.lockError ?? outcome.unitError
  if (error) result.error = error
  return result
}
