/**
 * The one flat description of a Run used by listings, JSON output, trees and
 * live views alike, so every view reports the same fields the same way.
 */
import type {RunState} from './store.js'
import {DEFAULT_EXECUTOR_KIND, isTerminal} from '../../base/records/run.js'
import {generationOf} from '../../base/records/generation-layout.js'
import {liveRunFrozen} from '../containment/live-usage.js'
import {askExecutor} from './executor-questions.js'

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
  /** Recorded as running but frozen (a paused parent's unit holds it, or its own command froze it): status reads paused. */
  frozen?: true
  /** Which launch of the Run id (1 for the first; absent in listings cached by earlier versions). */
  generation?: number
  state_dir: string
  /** A queued Run waiting for resource locks: their names ([locks]). */
  waiting_for?: string[]
  /** Where the supervisor runs (SPEC: Executors): `local` or `slurm`, with the Slurm job id and node. */
  executor?: string
  job_id?: string | null
  node?: string | null
  /** The command line, for display (set by summarizeRun; absent in summaries made elsewhere). */
  command?: string
  /**
   * CPU seconds and memory (SPEC: Containment, Usage): a live Run's read from
   * its unit (CPU so far, memory now and its peak), a finished one's as its
   * result (else run.json's mirror) recorded them; null when not recorded.
   */
  resources?: RunResources | null
}

export interface RunResources {
  /** null where the unit could not say (a cgroup hierarchy without that figure). */
  cpu_seconds: number | null
  peak_memory_bytes: number | null
  /** A live Run's memory now. */
  memory_bytes?: number | null
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
  // Running by its record, frozen in fact (a paused parent's unit holds it): shown as it is, paused.
  const frozen = meta.status === 'running' && liveRunFrozen(meta, state.dir)
  return {
    run: meta.run,
    run_instance_id: meta.run_instance_id,
    recipe: meta.recipe,
    status: frozen ? 'paused' : meta.status,
    ...(frozen ? {frozen: true} : {}),
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
    command: commandText(meta.argv),
    resources: resourcesOf(state),
  }
}

/** The argv as one line to show (words with spaces or quotes quoted), '' when there is none. */
export function commandText(argv: unknown): string {
  if (!Array.isArray(argv)) return ''
  return argv
    .map((w) => (typeof w === 'string' && /^[A-Za-z0-9_@%+=:,./-]+$/.test(w) ? w : JSON.stringify(String(w))))
    .join(' ')
}

/** The summary's `resources`: read live by the Run's executor, or as its result recorded them. */
function resourcesOf(state: RunState): RunResources | null {
  const {meta, result} = state
  if (isTerminal(meta.status)) return runResources(result?.resources) ?? runResources(meta.resources)
  if (meta.status === 'queued') return null
  return askExecutor().usage(meta) ?? null
}

/** A recorded `resources` whose figures are numbers or null (anything else: not recorded). */
function runResources(value: unknown): RunResources | null {
  const r = value as Partial<RunResources> | null | undefined
  const figure = (v: unknown): v is number | null => v === null || typeof v === 'number'
  if (!r || !figure(r.cpu_seconds) || !figure(r.peak_memory_bytes)) return null
  return {cpu_seconds: r.cpu_seconds, peak_memory_bytes: r.peak_memory_bytes}
}

/** The executor fields of a summary: kind, and for a Slurm Run its job id and node (once known). */
function executorSummary(meta: RunState['meta']): Pick<RunSummary, 'executor' | 'job_id' | 'node'> {
  const executor = (meta.executor ?? {}) as {kind?: unknown; job_id?: unknown; node?: unknown}
  const kind = typeof executor.kind === 'string' ? executor.kind : DEFAULT_EXECUTOR_KIND
  return {
    executor: kind,
    job_id: typeof executor.job_id === 'string' ? executor.job_id : null,
    node: typeof executor.node === 'string' ? executor.node : null,
  }
}
