/**
 * The Slurm executor's view of a Run: its `executor` record in run.json and
 * the reconciliation rule (SPEC: Executors). A pending job is `queued`, a
 * suspended one `paused`; a job that ended without result.json is `failed`
 * (reason timeout) after a time limit, `cancelled` when cancelled outside
 * actors, otherwise `exited`, with Slurm's state kept as `executor_state`.
 */
import type {RunMeta} from '../../base/records/run.js'
import type {SlurmOptions} from './slurm-options.js'
import {JOB_FORGOTTEN, jobHasEnded, jobIsWaiting, querySlurmJob} from './slurm-cli.js'
import type {SupervisorCheck} from '../../base/records/supervisor-check.js'
import type {JobHost} from './executor.js'
import {letHeldSupervisorGo} from './held-supervisor.js'
import {supervisorArgs} from '../../base/records/supervisor-args.js'
import {runCgroupOf} from '../containment/caller-cgroup.js'
import {nodeOs} from '../../base/platform/builtins.js'

/** How often a reader re-reads a Slurm Run's files (at most): the node's writes notify nobody here. */
export const REMOTE_POLL_MS = 500

/** run.json's `executor` for a Slurm Run. */
export interface SlurmExecutorRecord extends SlurmOptions {
  kind: 'slurm'
  /** Set once sbatch accepted the job. */
  job_id?: string
  /** The node the supervisor runs on (written by the supervisor). */
  node?: string
  /** When `run` began submitting (a submission that never records a job id is lost after a grace period). */
  submitting_at?: string
  submitted_at?: string
}

export type SlurmRunMeta = RunMeta & {executor: SlurmExecutorRecord}

export function isSlurmRun(meta: Pick<RunMeta, 'executor'>): meta is SlurmRunMeta {
  const executor = meta.executor as {kind?: unknown} | undefined
  return typeof executor === 'object' && executor !== null && executor.kind === 'slurm'
}

/** The Run's Slurm job id, once submitted. */
export function slurmJobId(meta: RunMeta): string | undefined {
  if (!isSlurmRun(meta)) return undefined
  const id = meta.executor.job_id
  return typeof id === 'string' && /^\d+(_\d+)?$/.test(id) ? id : undefined
}

/** True inside the Run's own job (the supervisor, its command, or a step that `control` started there). */
export function insideOwnJob(meta: RunMeta, env: NodeJS.ProcessEnv = process.env): boolean {
  const id = slurmJobId(meta)
  return id !== undefined && env.SLURM_JOB_ID === id
}

/** How long a submission may take before a Run without a job id counts as lost. */
const SUBMIT_GRACE_MS = 30_000

/**
 * Slurm's answer for a live Slurm Run. When Slurm cannot be asked (no
 * squeue, controller down) nobody can tell, and the Run stays as it is.
 */
export function checkSlurmSupervisor(meta: SlurmRunMeta, dir: string): SupervisorCheck {
  const jobId = slurmJobId(meta)
  if (!jobId) {
    // Never submitted yet: held by its parent's max-parallel queue, or `run` is submitting it right now.
    const since = meta.executor.submitting_at
    if (since && Date.now() - Date.parse(since) > SUBMIT_GRACE_MS)
      return {alive: false, status: 'exited', reason: 'submit_lost', details: {executor_state: null}}
    return {alive: true}
  }
  const job = querySlurmJob(jobId)
  if (job === undefined) return {alive: true}
  if (job === JOB_FORGOTTEN) {
    // Purged from Slurm's memory (MinJobAge) without a result: nothing says how it ended.
    return {alive: false, status: 'exited', reason: 'job_forgotten', details: {executor_state: null}}
  }
  if (jobIsWaiting(job)) return {alive: true, status: 'queued'}
  if (job.state === 'SUSPENDED') return {alive: true, status: 'paused'}
  if (!jobHasEnded(job)) {
    letSupervisorHereGo(meta, dir)
    return {alive: true}
  }
  const details = {executor_state: job.state, ...(job.reason ? {executor_reason: job.reason} : {})}
  // A stop or kill that went through Slurm itself (no job step could start) marked the Run first.
  if (meta.ending)
    return {
      alive: false,
      status: meta.ending.status,
      reason: meta.ending.status === 'killed' ? 'kill' : 'stop',
      details,
    }
  if (job.state === 'TIMEOUT' || job.state === 'DEADLINE')
    return {alive: false, status: 'failed', reason: 'timeout', details}
  if (job.state === 'CANCELLED') return {alive: false, status: 'cancelled', reason: 'slurm_cancelled', details}
  return {alive: false, status: 'exited', reason: 'supervisor_lost', details}
}

/**
 * A running job's supervisor on this very machine (a one-node cluster, a
 * node that is also where `actors` is asked) is let go as a local one is
 * (held-supervisor.ts): the job's time limit would end a Run that stopped
 * its supervisor, but only at the next whole minute Slurm counts in.
 */
function letSupervisorHereGo(meta: SlurmRunMeta, dir: string): void {
  if (meta.host !== nodeOs().hostname() || !supervisorArgs(meta, dir)) return
  const pid = meta.process_identity!.pid
  letHeldSupervisorGo(pid, dir, runCgroupOf(pid) !== undefined)
}

/**
 * Why a queued Slurm Run has not started: its job's state and Slurm's reason
 * (`Slurm job 12 PENDING: Resources`), from the listing every read of a live
 * Slurm Run shares; not yet submitted: said so.
 */
export function slurmQueuedWhy(jobId: string | null | undefined): string {
  if (!jobId) return 'not submitted to Slurm yet'
  const job = querySlurmJob(jobId)
  if (job === undefined) return `Slurm job ${jobId} (Slurm does not answer)`
  if (job === JOB_FORGOTTEN) return `Slurm job ${jobId} (Slurm no longer knows it)`
  return `Slurm job ${jobId} ${job.state}${job.reason ? `: ${job.reason}` : ''}`
}

/**
 * Slurm's jobs hold the local Runs launched inside them (executor.ts
 * JobHost): such a Run records the job, and is lost once the job ended.
 */
export const slurmJobHost: JobHost = {
  jobOf: (env) => (env.SLURM_JOB_ID ? {slurm_job_id: env.SLURM_JOB_ID} : undefined),
  checkJobOf: (meta) => {
    const executor = meta.executor as {slurm_job_id?: unknown} | undefined
    const jobId = typeof executor?.slurm_job_id === 'string' ? executor.slurm_job_id : undefined
    if (!jobId) return undefined
    const job = querySlurmJob(jobId)
    if (job === JOB_FORGOTTEN)
      return {alive: false, status: 'exited', reason: 'supervisor_lost', details: {executor_state: null}}
    if (job && jobHasEnded(job))
      return {alive: false, status: 'exited', reason: 'supervisor_lost', details: {executor_state: job.state}}
    return {alive: true}
  },
}
