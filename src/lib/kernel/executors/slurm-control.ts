/**
 * `actors control` for a Run in a Slurm job, from outside that job. The verb
 * runs inside the job on its node (`srun --jobid ID --overlap`, the actors CLI
 * itself: slurm-step.ts), so stop, kill, the identity guard and declared
 * actions over the node-local socket behave exactly as for a local Run. When
 * no job step can start (the job is pending or suspended, or srun fails),
 * Slurm itself acts: `scancel` for stop and kill (TERM, then KILL after
 * kill_grace). Pause and resume act on the whole job and wait for Slurm to
 * confirm it (slurm-suspend.ts).
 */
import {join} from 'node:path'
import {ActorsError, EXIT, notActiveError} from '../../base/platform/errors.js'
import {notifyStateChange} from '../../base/bell/notify.js'
import {readRunState, updateRunMeta, type RunState} from '../runs/store.js'
import {DEFAULT_KILL_GRACE_MS, isTerminal, type RunMeta} from '../../base/records/run.js'
import {collectDescendants} from '../runs/children.js'
import {askedFrom, controlEnding} from '../runs/end-request.js'
import {kernelStatus} from '../signals/status.js'
import {endedOutcome, trace, type EndMode} from '../signals/runtime-actions.js'
import {watchUntil} from '../../base/bell/watch-until.js'
import {
  forgetSlurmListing,
  JOB_FORGOTTEN,
  querySlurmJob,
  runSlurmCommand,
  showSlurmJob,
  type SlurmJob,
} from './slurm-cli.js'
import {insideOwnJob, isSlurmRun, REMOTE_POLL_MS, slurmJobId} from './slurm.js'
import {runInJob} from './slurm-step.js'
import {pauseOrResumeSlurmRun} from './slurm-suspend.js'

/** How long `control` waits for the Run's result after Slurm was told to end the job. */
const RESULT_WAIT_MS = 5000

/** True when a control of this Run must go through Slurm: a live, submitted Slurm Run, and we are not inside its job. */
export function needsSlurmControl(meta: RunMeta): boolean {
  return isSlurmRun(meta) && slurmJobId(meta) !== undefined && !isTerminal(meta.status) && !insideOwnJob(meta)
}

/**
 * Apply `action` to the Slurm Run in `state`: inside its job when the job
 * runs, else through Slurm. Returns the same document a local control
 * returns (plus `via`), or throws the ActorsError the node reported.
 */
export async function controlSlurmRun(
  home: string,
  state: RunState,
  action: string,
  value: string | undefined,
): Promise<Record<string, unknown>> {
  const jobId = slurmJobId(state.meta)!
  if (action !== 'status') requireOwnJob(state, jobId)
  forgetSlurmListing()
  const job = querySlurmJob(jobId)
  let note =
    job === undefined
      ? 'Slurm did not answer'
      : job === JOB_FORGOTTEN
        ? `Slurm no longer knows job ${jobId}`
        : `job ${jobId} is ${job.state}`
  if (action === 'pause' || action === 'resume') {
    if (state.meta.status === 'queued')
      throw notActiveError(
        `Run ${state.meta.run} is queued (${note}); it has no process to ${action} yet`,
        `wait until it runs, or stop it: actors control ${state.meta.run} stop`,
      )
    return pauseOrResumeSlurmRun(home, state, jobId, typeof job === 'object' ? job : undefined, action, note)
  }
  if (typeof job === 'object' && (job.state === 'RUNNING' || job.state === 'STOPPED')) {
    const asked = new Date().toISOString()
    const step = runInJob(home, state, jobId, action, value)
    if (step.document) return {...step.document, via: 'srun', job_id: jobId, node: job.node}
    note = `no job step could start in job ${jobId}: ${step.problem}`
    const now = readRunState(state.dir)
    if (now && isTerminal(now.meta.status) && (action === 'stop' || action === 'kill')) {
      // The step ended with the job it stopped (Slurm ends steps when the batch script exits).
      // Its document went with it: the descendants its cascade ended are read back from their files.
      return endedDocument(now, action, {via: 'srun', job_id: jobId, ...descendantsEndedSince(home, now, asked)})
    }
  }
  // Without a job step Slurm can only end the job (stop, kill) and status reads the Run's files.
  if (action !== 'status' && action !== 'stop' && action !== 'kill') {
    throw notActiveError(
      `Run ${state.meta.run}: cannot deliver "${action}": ${note}`,
      `retry once the job runs (squeue -j ${jobId}); declared actions need a job step on the Run's node`,
      {job_id: jobId},
    )
  }
  return slurmFallback(home, state, jobId, typeof job === 'object' ? job : undefined, action, note)
}

/**
 * A job id read back from run.json is a claim (issue 35: a Run rewrote it and
 * `kill` cancelled a foreign job): it is acted on only when Slurm shows the
 * job's name or comment carrying the Run's instance (slurm-submit.ts puts it
 * in both). A job Slurm cannot show (gone, or Slurm down) is not refused here:
 * nothing can be done to it either way.
 */
function requireOwnJob(state: RunState, jobId: string): void {
  const fields = showSlurmJob(jobId)
  const instance = state.meta.run_instance_id
  if (!fields || [fields.JobName, fields.Comment].some((text) => text?.includes(instance))) return
  throw new ActorsError(
    `${join(state.dir, 'run.json')}: executor.job_id ${jobId} is not this Run's job (Slurm shows neither its name nor its comment carrying instance ${instance}); nothing was sent to it`,
    EXIT.failed,
    `check the job with \`scontrol show job ${jobId}\`; inspect the file by hand`,
    {job_id: jobId},
  )
}

/** A Slurm command that must succeed for the fallback; a refusal is exit 3 with Slurm's words. */
function slurm(state: RunState, args: string[], note: string): void {
  const out = runSlurmCommand(args[0], args.slice(1), {timeoutMs: 30_000})
  forgetSlurmListing()
  if (out.ok) return
  throw notActiveError(
    `Run ${state.meta.run}: ${note}; and \`${args.join(' ')}\` failed: ${out.spawnError ?? out.stderr}`,
    'check the job with squeue/scontrol',
  )
}

/** Stop, kill or status through Slurm itself (no job step). */
async function slurmFallback(
  home: string,
  state: RunState,
  jobId: string,
  job: SlurmJob | undefined,
  action: string,
  note: string,
): Promise<Record<string, unknown>> {
  const {meta} = state
  const base = {
    action,
    run: meta.run,
    run_instance_id: meta.run_instance_id,
    handled_by: 'kernel',
    via: 'slurm',
    job_id: jobId,
    signalled: [] as number[],
  }
  if (action === 'status') return statusFromFiles(state, job)
  // stop / kill: mark the Run first, so whoever settles it (its supervisor, or reconciliation once the job is gone) records what the user did.
  const status = action === 'kill' ? 'killed' : 'cancelled'
  // Where the end was asked from (runs/end-request.ts): only from outside its tree does a wait leave the Run's row out.
  const from = askedFrom(home, meta.run)
  updateRunMeta(state.dir, (m) =>
    isTerminal(m.status) || m.ending?.status === 'killed'
      ? undefined
      : {...m, ending: controlEnding(status, from, 'control:slurm')},
  )
  trace(state.dir, state.meta, action, {via: 'slurm', job_id: jobId})
  if (action === 'kill' || job?.state !== 'RUNNING') {
    slurm(state, ['scancel', ...(action === 'kill' ? ['--signal=KILL'] : []), jobId], note)
  } else {
    // TERM to the batch script (the supervisor traps it and ends the command tree), the whole job after kill_grace.
    slurm(state, ['scancel', '--full', '--signal=TERM', jobId], note)
    const grace = Number(meta.kill_grace_ms ?? DEFAULT_KILL_GRACE_MS)
    const ended = await awaitEnd(state, grace)
    if (!ended || !isTerminal(ended.meta.status)) slurm(state, ['scancel', '--signal=KILL', jobId], note)
  }
  notifyStateChange(home)
  const final = await awaitEnd(state, RESULT_WAIT_MS)
  if (final && isTerminal(final.meta.status))
    return endedDocument(final, action === 'kill' ? 'kill' : 'stop', {
      via: 'slurm',
      job_id: jobId,
      fallback: `${note}; scancel`,
    })
  return {
    ...base,
    status: final?.meta.status ?? meta.status,
    changed: true,
    settled: false,
    result: null,
    fallback: `${note}; scancel`,
  }
}

/** Wait for the Run to be terminal, re-reading (and so reconciling through Slurm) at least every REMOTE_POLL_MS. */
function awaitEnd(state: RunState, timeoutMs: number): Promise<RunState | undefined> {
  return watchUntil(
    state.dir,
    () => readRunState(state.dir),
    (s) => !s || isTerminal(s.meta.status),
    {timeoutMs, pollMs: REMOTE_POLL_MS},
  )
}

/** What a stop/kill reports once the Run has ended. */
function endedDocument(state: RunState, action: EndMode, extra: Record<string, unknown>): Record<string, unknown> {
  return {...endedOutcome(state, action), handled_by: 'kernel', ...extra}
}

/**
 * `{descendants}` of a stop or kill whose own report was lost: the Run's
 * descendants that ended since `since` (the node's cascade ends every live
 * one before the Run itself), those cancelled before they started as `cancelled_queued`.
 */
function descendantsEndedSince(home: string, state: RunState, since: string): {descendants?: Record<string, unknown>} {
  const ended: string[] = []
  const queued: string[] = []
  for (const d of collectDescendants(home, state.dir, state.meta)) {
    if (!isTerminal(d.meta.status) || typeof d.meta.ended_at !== 'string' || d.meta.ended_at < since) continue
    // A queued child the cascade cancelled before it started is settled with the parent's reason (launch/child-queue.ts).
    const cancelledQueued = d.meta.reason === 'parent_stopped' || d.meta.reason === 'parent_killed'
    ;(cancelledQueued ? queued : ended).push(d.meta.run)
  }
  return ended.length + queued.length > 0 ? {descendants: {ended, cancelled_queued: queued, errors: []}} : {}
}

/** `status` without a job step: what the files and Slurm say (no process list: the node's process table is not ours to read). */
function statusFromFiles(state: RunState, job: SlurmJob | undefined): Record<string, unknown> {
  const files = kernelStatus({...state, meta: {...state.meta, children_processes: [], child_pid: undefined}})
  return {
    action: 'status',
    ...files,
    child_pid: state.meta.child_pid ?? null,
    pids: [],
    identity_mismatch: [],
    supervisor_alive: job?.state === 'RUNNING' || job?.state === 'SUSPENDED',
    via: 'slurm',
    executor: {kind: 'slurm', job_id: slurmJobId(state.meta), state: job?.state ?? null, node: job?.node ?? null},
  }
}
