/**
 * What the supervisor itself needs to know about its executor, on whatever
 * machine it runs: the host (and Slurm job and node) it records at start, and
 * whether a SIGTERM it receives is Slurm ending the job at its time limit.
 */
import type {RunMeta} from '../../base/records/run.js'
import {jobReachedTimeLimit, showSlurmJob} from './slurm-cli.js'
import {isSlurmRun} from './slurm.js'
import {nodeOs} from '../../base/platform/builtins.js'

/** Fields the supervisor adds to run.json when it starts: `host`, and for a Slurm Run the job id and node. */
export function supervisorStartFields(meta: RunMeta, env: NodeJS.ProcessEnv = process.env): Partial<RunMeta> {
  const host = nodeOs().hostname()
  if (!isSlurmRun(meta) || !env.SLURM_JOB_ID) return {host}
  // The job can start before `run` recorded the id sbatch printed: take it from the job's environment.
  return {
    host,
    executor: {...meta.executor, job_id: meta.executor.job_id ?? env.SLURM_JOB_ID, node: env.SLURMD_NODENAME ?? host},
  }
}

/** True when a SIGTERM reaching the supervisor of a Slurm Run comes from the job's time limit (not a cancel). */
export function termIsJobTimeLimit(meta: RunMeta, env: NodeJS.ProcessEnv = process.env): boolean {
  return isSlurmRun(meta) && Boolean(env.SLURM_JOB_ID) && jobReachedTimeLimit(env.SLURM_JOB_ID!)
}

/**
 * Whether Slurm is ending this Run's job (asked by a supervisor whose command
 * just died): Slurm signals every process of the job at once, so the command
 * may die of the TERM before the supervisor's own handler has run. The job is
 * `timeout` at its time limit, `cancelled` when it is being cancelled (it is
 * COMPLETING while its batch script, this supervisor, still runs).
 */
export function slurmJobEnding(
  meta: RunMeta,
  env: NodeJS.ProcessEnv = process.env,
): 'timeout' | 'cancelled' | undefined {
  if (!isSlurmRun(meta) || !env.SLURM_JOB_ID) return undefined
  const job = showSlurmJob(env.SLURM_JOB_ID)
  if (!job) return undefined
  if (job.Reason === 'TimeLimit' || job.JobState === 'TIMEOUT' || job.JobState === 'DEADLINE') return 'timeout'
  if (job.JobState === 'COMPLETING' || job.JobState === 'CANCELLED') return 'cancelled'
  return undefined
}
