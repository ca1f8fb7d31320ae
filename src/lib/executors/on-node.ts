/**
 * What the supervisor itself needs to know about its executor, on whatever
 * machine it runs: the host (and Slurm job and node) it records at start, and
 * whether a SIGTERM it receives is Slurm ending the job at its time limit.
 */
import {hostname} from 'node:os'
import type {RunMeta} from '../run-types.js'
import {jobReachedTimeLimit} from './slurm-cli.js'
import {isSlurmRun} from './slurm.js'

/** Fields the supervisor adds to run.json when it starts: `host`, and for a Slurm Run the job id and node. */
export function supervisorStartFields(meta: RunMeta, env: NodeJS.ProcessEnv = process.env): Partial<RunMeta> {
  const host = hostname()
  if (!isSlurmRun(meta) || !env.SLURM_JOB_ID) return {host}
  // The job can start before `run` recorded the id sbatch printed: take it from the job's environment.
  return {host, executor: {...meta.executor, job_id: meta.executor.job_id ?? env.SLURM_JOB_ID, node: env.SLURMD_NODENAME ?? host}}
}

/** True when a SIGTERM reaching the supervisor of a Slurm Run comes from the job's time limit (not a cancel). */
export function termIsJobTimeLimit(meta: RunMeta, env: NodeJS.ProcessEnv = process.env): boolean {
  return isSlurmRun(meta) && Boolean(env.SLURM_JOB_ID) && jobReachedTimeLimit(env.SLURM_JOB_ID!)
}
