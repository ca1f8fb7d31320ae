/**
 * A control verb carried into a Slurm Run's job: `srun --jobid ID --overlap`
 * starts the actors CLI as a step of the job, on its node, where the verb acts
 * as for a local Run (slurm-control.ts, slurm-suspend.ts use it).
 */
import {ActorsError, EXIT} from '../../base/platform/errors.js'
import {binDir} from '../../base/platform/package-root.js'
import type {RunState} from '../runs/store.js'
import {DEFAULT_KILL_GRACE_MS} from '../../base/records/run.js'
import {runSlurmCommand} from './slurm-cli.js'

export interface StepOutcome {
  /** The node's one JSON document (a control result). */
  document?: Record<string, unknown>
  /** Why no step could start, in srun's own words. */
  problem?: string
}

/**
 * Run `actors control DIR ACTION [VALUE] --json` as a step of job `jobId`, on
 * its node, and parse its one JSON document. A refusal from the node (finished
 * Run, identity guard, bad value) is thrown as the same ActorsError, with its
 * exit code; a step that could not start is `{problem}`.
 */
export function runInJob(
  home: string,
  state: RunState,
  jobId: string,
  action: string,
  value: string | undefined,
): StepOutcome {
  const grace = Number(state.meta.kill_grace_ms ?? DEFAULT_KILL_GRACE_MS)
  const argv = [
    `${binDir()}/actors`,
    'control',
    state.dir,
    action,
    ...(value !== undefined ? [value] : []),
    '--json',
    '--home',
    home,
  ]
  const out = runSlurmCommand(
    'srun',
    [`--jobid=${jobId}`, '--overlap', '--nodes=1', '--ntasks=1', '--quiet', process.execPath, ...argv],
    {
      timeoutMs: 20_000 + grace,
    },
  )
  let document: Record<string, unknown> | undefined
  try {
    const parsed = JSON.parse(out.stdout.trim()) as unknown
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) document = parsed as Record<string, unknown>
  } catch {}
  if (!document)
    return {
      problem: out.spawnError ?? (out.stderr.split('\n').filter(Boolean).pop() || `srun exited with ${out.status}`),
    }
  const error = document.error as {message?: string; exit_code?: number; fix?: string | null} | undefined
  if (error && typeof error === 'object' && typeof error.message === 'string') {
    const {message, exit_code: code, fix, ...details} = error
    throw new ActorsError(message, typeof code === 'number' ? code : EXIT.failed, fix ?? undefined, {
      ...details,
      via: 'srun',
      job_id: jobId,
    })
  }
  return {document}
}
