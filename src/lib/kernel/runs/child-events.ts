/**
 * A parent's Trace records its children's lives (SPEC: Trees, owners and
 * limits): `runtime.child_started` when a child is launched from inside it
 * (running, or queued behind its --max-parallel) or adopted into it, and
 * `runtime.child_ended` when a child is terminal, each with `data: {run,
 * run_instance_id, status, exit_code}` (the end adds the child's `usage`, or
 * null when it reported none, and `budget_exceeded`). The event goes to the trace.jsonl in
 * the parent's state dir, which is always the parent's current generation's,
 * so a child of an earlier generation that ends later is told to the
 * generation now in charge of it. The Trace's own bounds apply. A Trace that
 * cannot be written never fails the launch or the end it reports.
 */
import {runDir} from '../../base/platform/home.js'
import {readRunMetaRaw, readRunResult} from './store.js'
import {appendTraceEvent} from './trace.js'
import {readUsage} from './usage.js'
import type {RunMeta} from '../../base/records/run.js'

export interface ChildLife {
  run: string
  run_instance_id: string
  status: string
  exit_code: number | null
}

/** Append one child event to the current generation of the parent in `parentDir`. Never throws. */
function traceChildEvent(
  parentDir: string,
  kind: 'runtime.child_started' | 'runtime.child_ended',
  summary: string,
  data: ChildLife & Record<string, unknown>,
): void {
  try {
    const parent = readRunMetaRaw(parentDir)
    if (!parent) return
    appendTraceEvent(parentDir, {kind, summary, data, run_instance_id: parent.run_instance_id})
  } catch {}
}

/** A child launched from inside the parent in `parentDir`, or adopted into it (`adopted: true`). Never throws. */
export function traceChildStarted(
  parentDir: string,
  child: {run: string; run_instance_id: string; status: string},
  extra: {adopted?: boolean} = {},
): void {
  const how = extra.adopted ? 'adopted' : child.status === 'queued' ? 'queued' : 'started'
  traceChildEvent(parentDir, 'runtime.child_started', `child ${child.run} ${how}`, {
    run: child.run,
    run_instance_id: child.run_instance_id,
    status: child.status,
    exit_code: null,
    ...extra,
  })
}

/** The tokens a child reported (as a batch row shows them), or null: none reported, or its totals unreadable. */
function childUsage(dir: string): {tokens: number; prompt_tokens: number; completion_tokens: number} | null {
  try {
    const totals = readUsage(dir)
    return totals
      ? {tokens: totals.tokens, prompt_tokens: totals.prompt_tokens, completion_tokens: totals.completion_tokens}
      : null
  } catch {
    return null
  }
}

/** The Run `meta` (a child) is terminal: tell its parent's Trace how it ended. Never throws. */
export function traceChildEnded(home: string, meta: RunMeta): void {
  if (!meta.parent) return
  try {
    const childDir = runDir(home, meta.run)
    const result = readRunResult(childDir, meta)
    const status = result?.status ?? meta.status
    const exitCode = result ? result.exit_code : typeof meta.exit_code === 'number' ? meta.exit_code : null
    const generation = typeof meta.generation === 'number' ? meta.generation : 1
    traceChildEvent(runDir(home, meta.parent.run), 'runtime.child_ended', `child ${meta.run} ${status}`, {
      run: meta.run,
      run_instance_id: meta.run_instance_id,
      status,
      exit_code: exitCode,
      generation,
      usage: childUsage(childDir),
      budget_exceeded: result?.budget_exceeded === true,
    })
  } catch {}
}
