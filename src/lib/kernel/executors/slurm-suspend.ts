/**
 * `pause` and `resume` of a Slurm Run from outside its job (SPEC: Containment,
 * "on Slurm the job is the unit"; docs/slurm.md). The job itself is suspended
 * and resumed (`scontrol suspend`/`resume`: every step and the supervisor),
 * and success is reported only once Slurm shows it SUSPENDED / RUNNING;
 * otherwise exit 3 with Slurm's words, and what was half done is undone.
 *
 * While the job runs, a job step on the node (slurm-step.ts) goes with it:
 * before a suspend it freezes the Run's own unit (processes Slurm's tracking
 * may have lost included) and proves the node answers; after a resume it
 * thaws that unit and writes `running`. The controller records a job
 * SUSPENDED the moment it is asked, whether or not the node's slurmd got the
 * request; it flags the node only once delivery failed (after MessageTimeout).
 * So when no step reached the node, the node is watched that long before the
 * suspend or resume counts as done.
 */
import {notActiveError} from '../../base/platform/errors.js'
import {notifyStateChange} from '../../base/bell/notify.js'
import {updateRunMeta, type RunState} from '../runs/store.js'
import {isTerminal, type RunMeta} from '../../base/records/run.js'
import {trace} from '../signals/runtime-actions.js'
import {
  askSlurmAboutJob,
  forgetSlurmListing,
  JOB_FORGOTTEN,
  jobHasEnded,
  nodeUnreachable,
  runSlurmCommand,
  slurmMessageTimeoutMs,
  slurmNodeState,
  type SlurmJob,
} from './slurm-cli.js'
import {runInJob, type StepOutcome} from './slurm-step.js'
import {sleep} from '../../base/platform/sleep.js'

/** How long pause/resume wait for Slurm to show the job SUSPENDED / RUNNING (the controller changes it within milliseconds). */
export const CONFIRM_MS = 5000
const CONFIRM_POLL_MS = 100
/** Beyond Slurm's MessageTimeout, how long a node no step reached is watched for being flagged unreachable. */
const NODE_MARGIN_MS = 3000
const NODE_POLL_MS = 250

type Verb = 'pause' | 'resume'
const WANTED = {pause: 'SUSPENDED', resume: 'RUNNING'} as const
const SLURM_VERB = {pause: 'suspend', resume: 'resume'} as const

interface Confirmation {
  ok: boolean
  /** What Slurm showed, in its words (job state and reason, node state). */
  words: string
  ms: number
}

function describeJob(jobId: string, job: SlurmJob | typeof JOB_FORGOTTEN | undefined): string {
  if (job === undefined) return `no answer about job ${jobId}`
  if (job === JOB_FORGOTTEN) return `no job ${jobId}`
  return `job ${jobId} ${job.state}${job.reason ? ` (reason ${job.reason})` : ''}`
}

/**
 * Poll Slurm (`squeue -j ID`) until the job shows the state `verb` asks for,
 * for at most CONFIRM_MS; with `node`, then watch that node for Slurm's
 * MessageTimeout plus a margin and fail when Slurm flags it unreachable.
 */
async function confirmJob(jobId: string, verb: Verb, node: string | undefined): Promise<Confirmation> {
  const started = Date.now()
  const wanted = WANTED[verb]
  let job = askSlurmAboutJob(jobId)
  while (
    !(typeof job === 'object' && (job.state === wanted || jobHasEnded(job))) &&
    Date.now() - started < CONFIRM_MS
  ) {
    await sleep(CONFIRM_POLL_MS)
    job = askSlurmAboutJob(jobId)
  }
  forgetSlurmListing()
  if (typeof job !== 'object' || job.state !== wanted) {
    return {
      ok: false,
      words: `Slurm shows ${describeJob(jobId, job)}, not ${wanted}, after ${Date.now() - started} ms`,
      ms: Date.now() - started,
    }
  }
  if (node) {
    const until = Date.now() + slurmMessageTimeoutMs() + NODE_MARGIN_MS
    for (;;) {
      const state = slurmNodeState(node)
      if (state && nodeUnreachable(state)) {
        return {
          ok: false,
          words: `Slurm shows job ${jobId} ${wanted}, but node ${node} is ${state}: the ${SLURM_VERB[verb]} did not reach it`,
          ms: Date.now() - started,
        }
      }
      if (Date.now() >= until) break
      await sleep(NODE_POLL_MS)
    }
  }
  return {ok: true, words: `job ${jobId} ${wanted}`, ms: Date.now() - started}
}

/** `scontrol suspend|resume ID`: undefined when Slurm took it, else its words. */
function askSlurm(verb: Verb, jobId: string): string | undefined {
  const out = runSlurmCommand('scontrol', [SLURM_VERB[verb], jobId], {timeoutMs: 30_000})
  forgetSlurmListing()
  return out.ok ? undefined : out.spawnError || out.stderr || `scontrol ${SLURM_VERB[verb]} exited with ${out.status}`
}

/** Record the Run `paused` (with how) or `running` in run.json, unless it has ended meanwhile. */
function recordStatus(state: RunState, verb: Verb, pausedVia?: 'srun' | 'slurm'): RunMeta | undefined {
  return updateRunMeta(state.dir, (m) => {
    if (isTerminal(m.status)) return undefined
    const next: RunMeta = {...m, status: verb === 'pause' ? 'paused' : 'running'}
    if (verb === 'pause') {
      next.paused_at = m.status === 'paused' && m.paused_at ? m.paused_at : new Date().toISOString()
      next.paused_via = pausedVia
    } else {
      delete next.paused_at
      delete next.paused_via
    }
    return next
  })
}

/** How a paused Run was paused from outside its job: `srun` (a step froze its unit, then Slurm suspended the job) or `slurm` (Slurm alone). */
function pausedVia(meta: RunMeta): 'srun' | 'slurm' | undefined {
  return meta.paused_via === 'srun' || meta.paused_via === 'slurm' ? meta.paused_via : undefined
}

/** What every pause/resume document carries. */
function baseDocument(state: RunState, verb: Verb, jobId: string, job: SlurmJob | undefined): Record<string, unknown> {
  return {
    action: verb,
    run: state.meta.run,
    run_instance_id: state.meta.run_instance_id,
    handled_by: 'kernel',
    job_id: jobId,
    node: job?.node ?? null,
    signalled: [],
  }
}

/**
 * Pause (suspend) or resume the job of the Slurm Run in `state`. `job` is
 * what Slurm said a moment ago (undefined when it did not answer), `note` why
 * no step was tried yet, for the message.
 */
export function pauseOrResumeSlurmRun(
  home: string,
  state: RunState,
  jobId: string,
  job: SlurmJob | undefined,
  verb: Verb,
  note: string,
): Promise<Record<string, unknown>> {
  return verb === 'pause' ? pauseSlurmRun(home, state, jobId, job, note) : resumeSlurmRun(home, state, jobId, job, note)
}

async function pauseSlurmRun(
  home: string,
  state: RunState,
  jobId: string,
  job: SlurmJob | undefined,
  note: string,
): Promise<Record<string, unknown>> {
  const run = state.meta.run
  const base = baseDocument(state, 'pause', jobId, job)
  if (job?.state === 'SUSPENDED') {
    recordStatus(state, 'pause', pausedVia(state.meta) ?? 'slurm')
    return {...base, status: 'paused', changed: false, via: 'slurm', job_state: 'SUSPENDED'}
  }
  // The node first: a step freezes the Run's own unit there, and shows the node answers.
  const step: StepOutcome =
    job?.state === 'RUNNING' || job?.state === 'STOPPED'
      ? runInJob(home, state, jobId, 'pause', undefined)
      : {problem: note}
  const stepNote = step.document ? '' : `; no job step could start (${step.problem})`
  const refused = askSlurm('pause', jobId)
  if (refused) {
    const undone = step.document ? undoStepPause(home, state, jobId) : 'nothing was paused'
    throw notActiveError(
      `Run ${run}: Slurm refused to suspend job ${jobId}: ${refused}${stepNote}; ${undone}`,
      'suspending a job needs Slurm operator rights on most clusters (scontrol suspend); ask an operator, or stop the Run instead',
      {job_id: jobId, slurm: refused},
    )
  }
  const seen = await confirmJob(jobId, 'pause', step.document ? undefined : (job?.node ?? undefined))
  if (!seen.ok) {
    // Not confirmed: take the suspend back, so Slurm's records and the Run say the same (running).
    const back = askSlurm('resume', jobId)
    const undone = step.document
      ? undoStepPause(home, state, jobId)
      : back
        ? `and \`scontrol resume\` failed too: ${back}`
        : 'the job was resumed in Slurm again'
    throw notActiveError(
      `Run ${run}: not paused: ${seen.words}${stepNote}; ${undone}`,
      `check the node and its slurmd (${job?.node ? `scontrol show node ${job.node}; ` : ''}squeue -j ${jobId}), then retry`,
      {job_id: jobId, slurm: seen.words},
    )
  }
  const next = recordStatus(state, 'pause', step.document ? 'srun' : 'slurm')
  trace(state.dir, state.meta, 'pause', {via: 'slurm', job_id: jobId, confirmed_ms: seen.ms})
  notifyStateChange(home)
  return {
    ...base,
    ...step.document,
    status: next?.status ?? 'paused',
    changed: true,
    via: step.document ? 'srun' : 'slurm',
    job_id: jobId,
    job_state: 'SUSPENDED',
    confirmed_ms: seen.ms,
    ...(step.document ? {} : {fallback: `${note}${stepNote}; scontrol suspend`}),
  }
}

/** Thaw what a step's pause froze (a pause Slurm did not confirm); says what became of the Run. */
function undoStepPause(home: string, state: RunState, jobId: string): string {
  let step: StepOutcome
  try {
    step = runInJob(home, state, jobId, 'resume', undefined)
  } catch (error) {
    step = {problem: (error as Error).message}
  }
  if (step.document) return 'its processes were thawed again: the Run is running'
  return `its processes stay frozen on the node (the resume step failed: ${step.problem}); run \`actors control ${state.meta.run} resume\``
}

async function resumeSlurmRun(
  home: string,
  state: RunState,
  jobId: string,
  job: SlurmJob | undefined,
  note: string,
): Promise<Record<string, unknown>> {
  const run = state.meta.run
  const base = baseDocument(state, 'resume', jobId, job)
  let confirmedMs: number | undefined
  if (job?.state === 'SUSPENDED') {
    // Slurm resumes every step of the job and the batch script (the supervisor); no step can start before.
    const refused = askSlurm('resume', jobId)
    if (refused)
      throw notActiveError(
        `Run ${run}: Slurm refused to resume job ${jobId}: ${refused}; the Run stays paused`,
        `check the job: squeue -j ${jobId}`,
        {
          job_id: jobId,
          slurm: refused,
        },
      )
    const seen = await confirmJob(jobId, 'resume', undefined)
    if (!seen.ok)
      throw notActiveError(`Run ${run}: not resumed: ${seen.words}`, `check the job: squeue -j ${jobId}; then retry`, {
        job_id: jobId,
        slurm: seen.words,
      })
    confirmedMs = seen.ms
  }
  const live = confirmedMs !== undefined || job?.state === 'RUNNING' || job?.state === 'STOPPED'
  // On the node, a step thaws what a pause through a step froze there and writes `running`.
  const step: StepOutcome = live ? runInJob(home, state, jobId, 'resume', undefined) : {problem: note}
  if (step.document) {
    recordStatus(state, 'resume')
    trace(state.dir, state.meta, 'resume', {
      via: 'slurm',
      job_id: jobId,
      ...(confirmedMs !== undefined ? {confirmed_ms: confirmedMs} : {}),
    })
    return {
      ...base,
      ...step.document,
      via: 'srun',
      job_id: jobId,
      job_state: 'RUNNING',
      ...(confirmedMs !== undefined ? {changed: true, confirmed_ms: confirmedMs} : {}),
    }
  }
  return resumeWithoutStep(home, state, jobId, job, note, step.problem ?? note, confirmedMs)
}

/** Resume when no step could reach the node: only Slurm's own resume, confirmed on the node's side by watching it. */
async function resumeWithoutStep(
  home: string,
  state: RunState,
  jobId: string,
  job: SlurmJob | undefined,
  note: string,
  problem: string,
  confirmedMs: number | undefined,
): Promise<Record<string, unknown>> {
  const run = state.meta.run
  const base = baseDocument(state, 'resume', jobId, job)
  if (confirmedMs === undefined && state.meta.status !== 'paused')
    return {...base, status: state.meta.status, changed: false, via: 'slurm', fallback: note}
  const via = pausedVia(state.meta)
  if (via === 'srun' || (via === undefined && confirmedMs === undefined)) {
    // A pause through a step (or from inside the job) froze the Run's unit on the node, which Slurm's resume does not thaw.
    throw notActiveError(
      `Run ${run}: ${confirmedMs !== undefined ? `Slurm resumed job ${jobId}, but ` : ''}no job step could start on the node to thaw the Run's processes (${problem}); the Run stays paused`,
      `retry \`actors control ${run} resume\` once srun can reach the node (squeue -j ${jobId}${job?.node ? `; scontrol show node ${job.node}` : ''})`,
      {job_id: jobId, slurm: problem},
    )
  }
  const seen = await confirmJob(jobId, 'resume', job?.node ?? undefined)
  if (!seen.ok)
    throw notActiveError(`Run ${run}: not resumed: ${seen.words}`, `check the node and its slurmd, then retry`, {
      job_id: jobId,
      slurm: seen.words,
    })
  const next = recordStatus(state, 'resume')
  trace(state.dir, state.meta, 'resume', {via: 'slurm', job_id: jobId, confirmed_ms: seen.ms})
  notifyStateChange(home)
  return {
    ...base,
    status: next?.status ?? 'running',
    changed: true,
    via: 'slurm',
    job_state: 'RUNNING',
    confirmed_ms: seen.ms,
    fallback: `${note}; scontrol resume`,
  }
}
