/**
 * The local executor's liveness check: the supervisor is a detached process
 * on this machine, alive while its recorded process identity matches.
 */
import {isSameProcess} from '../platform/process-identity.js'
import type {RunMeta} from '../records/run.js'
import {JOB_FORGOTTEN, jobHasEnded, querySlurmJob} from './slurm-cli.js'
import type {SupervisorCheck} from '../records/supervisor-check.js'
import {nodeOs} from '../platform/builtins.js'

/** How long a Run may sit with no supervisor identity recorded before we call it lost. */
export const LAUNCH_GRACE_MS = 30_000

/** Whether the local supervisor of a live Run is still there (a queued Run has none yet and is alive). */
export function checkLocalSupervisor(meta: RunMeta): SupervisorCheck {
  // A queued Run has no supervisor yet, unless one is waiting for the Run's locks ([locks]).
  if (meta.status === 'queued' && !meta.process_identity) return {alive: true}
  if (typeof meta.host === 'string' && meta.host !== thisHost()) return checkFromAnotherHost(meta)
  if (meta.process_identity) return isSameProcess(meta.process_identity) ? {alive: true} : lost()
  // Launched but the supervisor's identity was never recorded: lost only after a grace period.
  return Date.now() - Date.parse(meta.created_at) > LAUNCH_GRACE_MS ? lost() : {alive: true}
}

let host: string | undefined
/** This machine's name, read once (listings check every live Run). */
function thisHost(): string {
  host ??= nodeOs().hostname()
  return host
}

function lost(): SupervisorCheck {
  return {alive: false, status: 'exited', reason: 'supervisor_lost'}
}

/**
 * A local Run whose supervisor runs on another machine (a child launched
 * inside a Slurm Run runs on that job's node): this machine's /proc says
 * nothing about it. It lives as long as the job it was launched in.
 */
function checkFromAnotherHost(meta: RunMeta): SupervisorCheck {
  const executor = meta.executor as {slurm_job_id?: unknown} | undefined
  const jobId = typeof executor?.slurm_job_id === 'string' ? executor.slurm_job_id : undefined
  if (!jobId) return {alive: true}
  const job = querySlurmJob(jobId)
  if (job === JOB_FORGOTTEN) return {alive: false, status: 'exited', reason: 'supervisor_lost', details: {executor_state: null}}
  if (job && jobHasEnded(job)) return {alive: false, status: 'exited', reason: 'supervisor_lost', details: {executor_state: job.state}}
  return {alive: true}
}
