/**
 * Submitting a Slurm Run: one `sbatch --parsable` of a two-line batch script
 * that execs the same supervisor (dist/supervisor.cjs) on the node, with the
 * state dir as its only argument. `run` returns as soon as sbatch answers
 * (a few ms); the supervisor then writes everything else as for a local Run.
 * The job is never requeued (--no-requeue): a second supervisor on the same
 * state dir after a node failure would run the Run twice.
 * A refused submission settles the Run as `failed` with sbatch's message.
 */
import {appendStateFile} from '../../base/platform/private-files.js'
import {noteEndedRun} from '../../base/records/ended-runs.js'
import {usageError} from '../../base/platform/errors.js'
import {parseDuration} from '../../base/platform/duration.js'
import {withLockSync} from '../../base/platform/file-lock.js'
import {supervisorScript} from '../../base/platform/package-root.js'
import {readRunMetaRaw, readRunResult, runFile, settledResult, updateRunMeta, writeResultLocked} from '../runs/store.js'
import {DEFAULT_KILL_GRACE_MS, type RunMeta} from '../../base/records/run.js'
import {supervisorEnvironment} from './supervisor-env.js'
import {traceQuietly} from '../runs/trace.js'
import {forgetSlurmListing, onPath, runSlurmCommand} from './slurm-cli.js'
import {isSlurmRun, slurmJobId, type SlurmExecutorRecord} from './slurm.js'

/** The file in the state dir that receives the batch job's own output (supervisor errors, Slurm's notices). */
export const SLURM_LOG = 'slurm.log'

/** Refuse `--on slurm` before anything is created when Slurm's client is not installed (exit 2). */
export function requireSlurmClient(env: NodeJS.ProcessEnv = process.env): void {
  if (onPath('sbatch', env)) return
  throw usageError(
    'sbatch not found on PATH: running a Run on Slurm needs the Slurm client commands (sbatch, squeue, scontrol, scancel, srun)',
    'install them (Debian: apt-get install slurm-client) or run the Run here: --on local',
    {executor: 'slurm'},
  )
}

/** Quote one word for the two-line /bin/sh batch script (paths only; never user values). */
function shellQuote(word: string): string {
  return `'${word.replaceAll("'", `'\\''`)}'`
}

/** sbatch reads `%` in file names as a pattern (`%j`); a literal one is written `%%`. */
function slurmPath(path: string): string {
  return path.replaceAll('%', '%%')
}

/**
 * The job's time limit in whole minutes (Slurm's unit): the Recipe's
 * `executor.time`, else every attempt's timeout plus kill_grace and a margin,
 * so the supervisor's own timer always fires first; none without a timeout.
 */
export function jobTimeLimitMinutes(meta: RunMeta, executor: SlurmExecutorRecord): number | undefined {
  if (executor.time !== undefined) return Math.max(1, Math.ceil(parseDuration(executor.time, 'executor.time') / 60_000))
  if (!meta.timeout_ms) return undefined
  const grace = Number(meta.kill_grace_ms ?? DEFAULT_KILL_GRACE_MS)
  const attempts = Math.max(1, meta.retry || 1)
  return Math.max(1, Math.ceil((attempts * (meta.timeout_ms + grace) + 30_000) / 60_000))
}

/** sbatch's arguments for the Run in `dir` (the script comes on stdin). */
export function sbatchArguments(meta: RunMeta, executor: SlurmExecutorRecord, dir: string): string[] {
  const args = [
    '--parsable',
    '--no-requeue',
    // The Run's instance in the job's name and comment: control acts only on a job that carries it (slurm-control.ts).
    `--job-name=actors:${meta.run}@${meta.run_instance_id}`,
    `--comment=actors:${meta.run_instance_id}`,
    '--nodes=1',
    '--ntasks=1',
    `--chdir=${dir}`,
    `--output=${slurmPath(`${dir}/${SLURM_LOG}`)}`,
    '--open-mode=append',
  ]
  const minutes = jobTimeLimitMinutes(meta, executor)
  if (minutes !== undefined) args.push(`--time=${minutes}`)
  if (executor.partition) args.push(`--partition=${executor.partition}`)
  if (executor.account) args.push(`--account=${executor.account}`)
  if (executor.cpus) args.push(`--cpus-per-task=${executor.cpus}`)
  if (executor.mem) args.push(`--mem=${executor.mem}`)
  if (executor.gres) args.push(`--gres=${executor.gres}`)
  return [...args, ...(executor.sbatch_args ?? [])]
}

function batchScript(dir: string): string {
  return `#!/bin/sh\nexec ${shellQuote(process.execPath)} ${shellQuote(supervisorScript())} ${shellQuote(dir)} slurm\n`
}

/**
 * Submit the Slurm Run in `dir` (created `queued`) and record its job id.
 * Returns what `run` reports; a Run that already has a job is left alone.
 */
export function submitSlurmRun(
  home: string,
  dir: string,
): {pid: null; status?: string; executor?: SlurmExecutorRecord; error?: string} {
  // Claim the submission under the Run's lock: a queued child whose slot frees while `run` still submits it is submitted once.
  let claimed = false
  const marked = updateRunMeta(dir, (meta) => {
    if (!isSlurmRun(meta) || slurmJobId(meta) || meta.executor.submitting_at) return undefined
    claimed = true
    return {...meta, executor: {...meta.executor, submitting_at: new Date().toISOString()}}
  })
  if (!claimed || !marked || !isSlurmRun(marked)) return {pid: null}
  const env = supervisorEnvironment(home)
  // A Run's own children run where it runs (on its node) unless they ask for Slurm themselves.
  delete env.ACTORS_EXECUTOR
  const out = runSlurmCommand('sbatch', sbatchArguments(marked, marked.executor, dir), {
    input: batchScript(dir),
    env,
    timeoutMs: 60_000,
  })
  const jobId = out.ok ? out.stdout.trim().split(';')[0] : ''
  if (!/^\d+$/.test(jobId))
    return failSubmission(
      home,
      dir,
      out.spawnError ?? (out.stderr || `sbatch exited with ${out.status} and printed no job id`),
    )
  forgetSlurmListing()
  const submitted = updateRunMeta(dir, (meta) =>
    isSlurmRun(meta)
      ? {
          ...meta,
          executor: {...meta.executor, job_id: meta.executor.job_id ?? jobId, submitted_at: new Date().toISOString()},
        }
      : undefined,
  )
  traceQuietly(dir, marked, {kind: 'runtime.submitted', summary: `Slurm job ${jobId}`, data: {job_id: jobId}})
  const executor = submitted && isSlurmRun(submitted) ? submitted.executor : {...marked.executor, job_id: jobId}
  return {pid: null, status: submitted?.status ?? 'queued', executor}
}

/** sbatch refused the job: the Run is `failed` with sbatch's message (also in stderr.log), never a stack trace. */
function failSubmission(home: string, dir: string, message: string): {pid: null; status: string; error: string} {
  const text = message.length > 2000 ? message.slice(0, 2000) + '…' : message
  let settled: RunMeta | undefined
  withLockSync(runFile(dir, 'lock'), () => {
    const meta = readRunMetaRaw(dir)
    if (!meta || readRunResult(dir, meta)) return
    traceQuietly(dir, meta, {kind: 'runtime.submit_failed', summary: text, data: {error: text}})
    try {
      appendStateFile(runFile(dir, 'stderr'), `actors: sbatch refused the job: ${text}\n`)
    } catch {}
    const result = {...settledResult(meta, 'failed', 'submit_failed'), error: text, executor_state: null}
    if (writeResultLocked(dir, meta, result)) settled = {...meta, status: 'failed'}
  })
  // A submission may run under a parent's children lock (a queued child released): the follow-ups of this
  // end (queued siblings start) are only noted, and run outside every lock (after-run.ts, followUpEndedRuns).
  if (settled) noteEndedRun(home, settled)
  return {pid: null, status: 'failed', error: text}
}
