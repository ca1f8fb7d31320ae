/**
 * The one flat description of a Run used by listings, JSON output, trees and
 * live views alike, so every view reports the same fields the same way.
 */
import type {RunState} from './store.js'
import {isTerminal} from './types.js'
import {generationOf} from '../generations/layout.js'
import {liveRunUsage} from '../executors/containment/live-usage.js'

export interface RunSummary {
  run: string
  run_instance_id: string
  recipe: string | null
  status: string
  owner: string
  parent: string | null
  root: string
  depth: number
  created_at: string
  started_at: string | null
  ended_at: string | null
  duration_ms: number | null
  exit_code: number | null
  pid: number | null
  notification: 'normal' | 'silent'
  /** Which launch of the Run id (1 for the first; absent in listings cached by earlier versions). */
  generation?: number
  state_dir: string
  /** A queued Run waiting for resource locks: their names ([locks]). */
  waiting_for?: string[]
  /** Where the supervisor runs (SPEC: Executors): `local` or `slurm`, with the Slurm job id and node. */
  executor?: string
  job_id?: string | null
  node?: string | null
  /** [containment] Live: CPU so far and memory now; finished: result.json `resources` (CPU and peak memory). */
  resources?: {cpu_seconds: number | null; memory_bytes?: number | null; peak_memory_bytes: number | null}
}

/** A Run's status as shown in tables and trees: a queued Run waiting for locks names them ([locks]). */
export function displayStatus(run: {status: string; waiting_for?: string[]}): string {
  return run.waiting_for?.length ? `${run.status} (lock ${run.waiting_for.join(',')})` : run.status
}

/** Summarise a Run; durations of live Runs are measured up to `now`. */
export function summarizeRun(state: RunState, now = Date.now()): RunSummary {
  const {meta, result} = state
  const started = meta.started_at ?? null
  const ended = result?.completed_at ?? (meta.ended_at as string | undefined) ?? null
  let duration: number | null = result?.duration_ms ?? (meta.duration_ms as number | undefined) ?? null
  if (duration === null && started && !isTerminal(meta.status)) duration = Math.max(0, now - Date.parse(started))
  return {
    run: meta.run,
    run_instance_id: meta.run_instance_id,
    recipe: meta.recipe,
    status: meta.status,
    owner: meta.owner,
    parent: meta.parent?.run ?? null,
    root: meta.root,
    depth: meta.depth,
    created_at: meta.created_at,
    started_at: started,
    ended_at: ended,
    duration_ms: duration,
    exit_code: result?.exit_code ?? (meta.exit_code as number | undefined) ?? null,
    pid: meta.pid ?? null,
    notification: meta.notification === 'silent' ? 'silent' : 'normal',
    generation: generationOf(meta),
    state_dir: state.dir,
    ...(meta.status === 'queued' && Array.isArray(meta.waiting_for) ? {waiting_for: meta.waiting_for as string[]} : {}),
    ...executorSummary(meta),
    ...resourcesSummary(state),
  }
}

/** The summary's `resources`: read live from the Run's unit, or as its result recorded them. */
function resourcesSummary(state: RunState): Pick<RunSummary, 'resources'> {
  const {meta, result} = state
  const recorded = (result?.resources ?? meta.resources) as RunSummary['resources'] | undefined
  if (isTerminal(meta.status)) return recorded ? {resources: recorded} : {}
  if (meta.status === 'queued') return {}
  const live = liveRunUsage(meta)
  return live ? {resources: live} : {}
}

/** The executor fields of a summary: kind, and for a Slurm Run its job id and node (once known). */
function executorSummary(meta: RunState['meta']): Pick<RunSummary, 'executor' | 'job_id' | 'node'> {
  const executor = (meta.executor ?? {}) as {kind?: unknown; job_id?: unknown; node?: unknown}
  const kind = typeof executor.kind === 'string' ? executor.kind : 'local'
  return {
    executor: kind,
    job_id: typeof executor.job_id === 'string' ? executor.job_id : null,
    node: typeof executor.node === 'string' ? executor.node : null,
  }
}
