/**
 * Talking to Slurm through its own commands (`squeue`, `scontrol`, `sbatch`,
 * `scancel`, `srun`), never its files or /proc: the submit host may not be the
 * node. Each call is one short synchronous child process (~20 ms); a listing
 * of every job Slurm remembers is cached for a moment so reading many Slurm
 * Runs costs one `squeue`, not one per Run. What reading a Slurm Run asks
 * (inspect, wait, the supervisor on the node) goes through node:child_process,
 * every other command through execa (src/lib/base/platform/execa.ts).
 */
import {childProcess} from '../../base/platform/builtins.js'
import {execaLibrary} from '../../base/platform/execa.js'
import {statSync} from 'node:fs'
import {delimiter, join} from 'node:path'

/** What Slurm says about one job. `state` is Slurm's own word (RUNNING, PENDING, CANCELLED, ...). */
export interface SlurmJob {
  job_id: string
  state: string
  node: string | null
  reason: string | null
}

/** A job Slurm no longer knows (purged after MinJobAge, or never existed). */
export const JOB_FORGOTTEN = 'forgotten'

export interface SlurmCommandResult {
  ok: boolean
  stdout: string
  stderr: string
  /** Set when the command could not be started at all (not on PATH, ...). */
  spawnError?: string
  status: number | null
}

/** Run a Slurm client command (through execa: not for the reading paths, see askSlurm); never throws. */
export function runSlurmCommand(
  command: string,
  args: string[],
  options: {input?: string; env?: NodeJS.ProcessEnv; timeoutMs?: number} = {},
): SlurmCommandResult {
  const out = execaLibrary().execaSync(command, args, {
    input: options.input,
    // Exactly this environment (execa would add process.env to it), and the output as printed, final newline too.
    env: options.env ?? process.env,
    extendEnv: false,
    timeout: options.timeoutMs ?? 30_000,
    stdio: [options.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    stripFinalNewline: false,
    reject: false,
  })
  // A command that could not start, or ran past its timeout: Node's own words (`spawnSync sbatch ENOENT`).
  const spawnError = out.failed && (out.code !== undefined || out.timedOut) ? out.originalMessage : undefined
  return {
    ok: !out.failed,
    stdout: typeof out.stdout === 'string' ? out.stdout : '',
    stderr: (typeof out.stderr === 'string' ? out.stderr : '').trim(),
    spawnError,
    status: out.exitCode ?? null,
  }
}

/**
 * A question asked whenever a Slurm Run is read (`squeue`, `scontrol show
 * job`: inspect, wait, the supervisor on the node), as runSlurmCommand asks
 * it but through node:child_process: execa would cost each such invocation
 * about 30 ms (src/lib/base/platform/execa.ts). Never throws.
 */
function askSlurm(command: string, args: string[], timeoutMs = 30_000): SlurmCommandResult {
  const out = childProcess().spawnSync(command, args, {
    encoding: 'utf8',
    env: process.env,
    timeout: timeoutMs,
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  return {
    ok: !out.error && out.status === 0,
    stdout: out.stdout ?? '',
    stderr: (out.stderr ?? '').trim(),
    spawnError: out.error?.message,
    status: out.status,
  }
}

/** Whether `command` is an executable on PATH (checked without running it). */
export function onPath(command: string, env: NodeJS.ProcessEnv = process.env): boolean {
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (!dir) continue
    try {
      const stat = statSync(join(dir, command))
      if (stat.isFile() && (stat.mode & 0o111) !== 0) return true
    } catch {}
  }
  return false
}

const FORMAT = '%i|%T|%N|%r'

function parseJobLines(text: string): Map<string, SlurmJob> {
  const jobs = new Map<string, SlurmJob>()
  for (const line of text.split('\n')) {
    const [id, state, node, reason] = line.trim().split('|')
    if (!id || !state) continue
    jobs.set(id, {
      job_id: id,
      state: state.toUpperCase(),
      node: node && node !== '(null)' ? node : null,
      reason: reason && reason !== 'None' ? reason : null,
    })
  }
  return jobs
}

/** How long one listing of all jobs answers for every Slurm Run read meanwhile. */
const LISTING_TTL_MS = 250
let listing: {at: number; jobs: Map<string, SlurmJob>} | undefined

/**
 * Slurm's view of job `jobId`: the job, JOB_FORGOTTEN when Slurm does not know
 * it (any more), or undefined when Slurm cannot be asked (no `squeue`,
 * controller down): then nobody can tell, and callers must not settle the Run.
 */
export function querySlurmJob(jobId: string): SlurmJob | typeof JOB_FORGOTTEN | undefined {
  const now = Date.now()
  if (!listing || now - listing.at > LISTING_TTL_MS) {
    const all = askSlurm('squeue', ['-h', '-t', 'all', '-o', FORMAT])
    listing = all.ok ? {at: now, jobs: parseJobLines(all.stdout)} : undefined
  }
  const cached = listing?.jobs.get(jobId)
  if (cached) return cached
  // Not in the listing: submitted after it was taken, or gone. Ask about this one job.
  const job = askSlurmAboutJob(jobId)
  if (typeof job === 'object') listing?.jobs.set(jobId, job)
  return job
}

/** Slurm's view of job `jobId` right now (one `squeue`, no cache); the same answers as querySlurmJob. */
export function askSlurmAboutJob(jobId: string): SlurmJob | typeof JOB_FORGOTTEN | undefined {
  const one = askSlurm('squeue', ['-h', '-t', 'all', '-j', jobId, '-o', FORMAT])
  if (one.ok) return parseJobLines(one.stdout).get(jobId) ?? JOB_FORGOTTEN
  if (/invalid job id/i.test(one.stderr)) return JOB_FORGOTTEN
  return undefined
}

/** The state Slurm gives node `node` (`scontrol show node`: IDLE, MIXED+NOT_RESPONDING, DOWN*, ...); undefined when it cannot say. */
export function slurmNodeState(node: string): string | undefined {
  const out = runSlurmCommand('scontrol', ['show', 'node', '-o', node], {timeoutMs: 10_000})
  return out.ok ? /\bState=(\S+)/.exec(out.stdout)?.[1] : undefined
}

/** True for a node state in which Slurm cannot reach the node's slurmd (flagged not responding, down, failing). */
export function nodeUnreachable(state: string): boolean {
  return /NOT_RESPONDING|DOWN|FAIL|UNKNOWN/i.test(state)
}

/** Slurm's MessageTimeout (how long the controller tries to reach a node's slurmd before it flags it), in ms; 10 s when unknown. */
export function slurmMessageTimeoutMs(): number {
  const out = runSlurmCommand('scontrol', ['show', 'config'], {timeoutMs: 10_000})
  const seconds = Number(/^MessageTimeout\s*=\s*(\d+)/m.exec(out.stdout)?.[1])
  return Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : 10_000
}

/** Forget the cached listing (after we changed a job ourselves). */
export function forgetSlurmListing(): void {
  listing = undefined
}

/** Job states in which the job is over (Slurm's JOB_STATE_BASE values past RUNNING/SUSPENDED). */
const ENDED_STATES = new Set([
  'COMPLETED',
  'CANCELLED',
  'FAILED',
  'TIMEOUT',
  'NODE_FAIL',
  'PREEMPTED',
  'BOOT_FAIL',
  'DEADLINE',
  'OUT_OF_MEMORY',
  'REVOKED',
  'SPECIAL_EXIT',
])
/** Job states in which the job waits to start. */
const WAITING_STATES = new Set(['PENDING', 'CONFIGURING', 'REQUEUED', 'REQUEUE_HOLD', 'REQUEUE_FED', 'RESV_DEL_HOLD'])

export function jobHasEnded(job: SlurmJob): boolean {
  return ENDED_STATES.has(job.state)
}

export function jobIsWaiting(job: SlurmJob): boolean {
  return WAITING_STATES.has(job.state)
}

/** `[D-]HH:MM:SS`, `MM:SS` or `UNLIMITED` (scontrol's durations) in seconds; Infinity when unlimited. */
export function parseSlurmDuration(text: string | undefined): number | undefined {
  if (!text) return undefined
  if (/^(UNLIMITED|INFINITE|Partition_Limit)$/i.test(text)) return Infinity
  const match = /^(?:(\d+)-)?(?:(\d+):)?(\d+):(\d+)$/.exec(text)
  if (!match) return undefined
  const [, days, hours, minutes, seconds] = match
  return Number(days ?? 0) * 86400 + Number(hours ?? 0) * 3600 + Number(minutes) * 60 + Number(seconds)
}

/** `scontrol show job -o ID` as a map of its Key=Value fields; undefined when Slurm cannot say. */
export function showSlurmJob(jobId: string): Record<string, string> | undefined {
  const out = askSlurm('scontrol', ['show', 'job', '-o', jobId], 10_000)
  if (!out.ok) return undefined
  const fields: Record<string, string> = {}
  for (const word of out.stdout.trim().split(/\s+/)) {
    const eq = word.indexOf('=')
    if (eq > 0) fields[word.slice(0, eq)] = word.slice(eq + 1)
  }
  return fields
}

/**
 * Whether job `jobId` is being ended by its time limit (asked by a supervisor
 * that just got TERM): its run time, which excludes suspended time, has
 * reached its limit (Slurm also names the reason `TimeLimit`). A cancel
 * (scancel) ends it with no reason, earlier.
 */
export function jobReachedTimeLimit(jobId: string): boolean {
  const fields = showSlurmJob(jobId)
  if (!fields) return false
  // While Slurm ends a job at its limit it says so (JobState=COMPLETING Reason=TimeLimit).
  if (fields.JobState === 'TIMEOUT' || fields.JobState === 'DEADLINE' || fields.Reason === 'TimeLimit') return true
  const limit = parseSlurmDuration(fields.TimeLimit)
  const ran = parseSlurmDuration(fields.RunTime)
  if (limit === undefined || ran === undefined || limit === Infinity) return false
  return ran >= limit
}
