/**
 * The supervisor's side of containment (SPEC: Containment): make the Run's
 * unit before its command starts (supervise.ts records it in
 * run.json with its start), spawn each step inside it, and at the end turn
 * the unit into result.json fields (usage,
 * the limit that ended it, leftovers) before removing it. Kept apart from
 * supervise.ts so that file stays about the life of a Run.
 */
import {readFileSync} from 'node:fs'
import {basename} from 'node:path'
import type {RunProcessQuery} from '../../base/platform/process-tree.js'
import {
  createUnit,
  runMarkOf,
  sweepBeyondUnitSync,
  type Leftover,
  type Unit,
  type UnitLimits,
} from '../../kernel/containment/index.js'
import {runUnitName} from '../../kernel/containment/unit-path.js'
import {stateDirBornTicks} from '../../kernel/containment/escapes.js'
import {leftUnitOf} from '../../kernel/runs/left-unit.js'
import {testHookPause} from '../../base/platform/test-hooks.js'
export {commandStartError} from '../../kernel/containment/command-check.js'
import type {RunMeta, RunResult} from '../../base/records/run.js'

/** The Run's limits as run.json records them (launch normalises Recipe `limits` and the run flags). */
export function runLimits(meta: RunMeta): UnitLimits {
  const limits = meta.limits as UnitLimits | undefined
  return limits && typeof limits === 'object' ? limits : {}
}

/**
 * Make the Run's unit; the caller records it in run.json (`containment`)
 * before the command starts. Returns an error message instead when its
 * limits cannot be enforced here.
 */
export function makeRunUnit(home: string, dir: string, meta: RunMeta, query: () => RunProcessQuery): Unit | string {
  testHookPause('startDelayMs', 10_000) // test-only: the moment before the start is recorded
  try {
    return createUnit(home, runUnitName(basename(dir), meta.run_instance_id), runLimits(meta), query)
  } catch (error) {
    return (error as Error).message
  }
}

/** CPU seconds of every child this process has reaped (the tracked fallback's figure for a finished Run). */
export function reapedCpuSeconds(): number | null {
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8')
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return (Number(fields[13]) + Number(fields[14])) / 100
  } catch {
    return null
  }
}

/**
 * Put the unit's part into `result` (usage as `resources`, `leftover`, and a
 * limit that ended a failed Run as its `reason`), then remove the unit.
 * `unitMadeTicks`: when the supervisor made the unit, nothing of the Run being
 * older (undefined for an adopter: from the state dir's birth). Returns the
 * result's reason.
 */
export function closeUnitIntoResult(
  unit: Unit,
  dir: string,
  leftover: Leftover[],
  result: RunResult,
  meta: RunMeta,
  unitMadeTicks: number | undefined,
): string | null {
  // Tracked: the unit is empty by now, so no new sample (a scan of the process table); the kept peak and the reaped CPU.
  const usage = unit.usage(false)
  const cpu = unit.record.kind === 'tracked' ? reapedCpuSeconds() : usage.cpu_seconds
  result.resources = {cpu_seconds: cpu, peak_memory_bytes: usage.peak_memory_bytes}
  // [containment] What left the unit: the marker sweep, then orphans that may be the Run's (never a silent empty).
  const seen = new Set(leftover.map((item) => item.pid))
  const known = [...leftover, ...leftUnitOf(meta).filter((item) => !seen.has(item.pid))]
  const beyond = sweepBeyondUnitSync(
    unit,
    runMarkOf(dir, result.run_instance_id, unitMadeTicks),
    {sinceTicks: unitMadeTicks ?? stateDirBornTicks(dir), cwd: meta.cwd},
    known,
  )
  if (known.length + beyond.length > 0) result.leftover = [...known, ...beyond]
  const limit = unit.limitHit()
  if (limit && result.status === 'failed' && result.reason !== 'timeout') result.reason = limit
  unit.remove()
  return result.reason
}

/** A tracked unit has no counters: sample its memory while it runs (usage() keeps the peak). Returns the stop. */
export function sampleTrackedUsage(unit: Unit): () => void {
  if (unit.record.kind !== 'tracked') return () => {}
  const timer = setInterval(() => unit.usage(), 500).unref()
  return () => clearInterval(timer)
}
