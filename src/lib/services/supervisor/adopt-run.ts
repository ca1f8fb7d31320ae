/**
 * A supervisor that takes over a Run whose supervisor was lost (SPEC:
 * Supervision; started by a reader, executors/take-over.ts): it opens the
 * unit run.json records instead of making one, waits for the running
 * command's unit to empty instead of spawning it, and takes the end the unit
 * recorded (containment/end-record.ts). What follows (the next step,
 * another attempt, the timeout's rest, stop and kill, the result and its
 * follow-ups) is the ordinary supervisor's (supervise.ts).
 */
import {sleep} from '../../base/platform/sleep.js'
import type {RunMeta} from '../../base/records/run.js'
import {currentAttempt, currentSteps, readEndRecord} from '../../kernel/containment/end-record.js'
import {generationOf} from '../../base/records/generation-layout.js'
import type {Unit} from '../../kernel/containment/index.js'
import type {StepOutcome} from './outcome.js'

/** The attempt's deadline and timeout the reader proved (run-deadline.ts) and gave the adopter; 0: none proven. */
export interface AdoptLimit {
  deadline: number
  timeoutMs: number
}

/** Where an adopted Run is: its attempt, the steps it awaits, and its timeout and when the attempt times out. */
export interface Resume {
  attempt: number
  steps: number[]
  /** The timeout of each attempt, ms (undefined: none). */
  timeoutMs: number | undefined
  /** When the attempt under way times out (ms since the epoch); only read with a timeout. */
  deadline: number
}

/**
 * The adopted Run's place in its plan, from run.json as the lost supervisor
 * left it, and its timeout: the earliest of `limit`'s and run.json's (a Run
 * may have raised or deleted its own, never lowered the proven one).
 */
export function resumeOf(meta: RunMeta, limit: AdoptLimit): Resume {
  const started = Date.parse(meta.attempt_started_at ?? meta.started_at ?? '')
  const recorded = Number(meta.timeout_ms) > 0 ? Number(meta.timeout_ms) : undefined
  const timeoutMs = earliest(limit.timeoutMs || undefined, recorded)
  const recordedDeadline =
    recorded !== undefined ? (Number.isFinite(started) ? started : Date.now()) + recorded : undefined
  const deadline = earliest(limit.deadline || undefined, recordedDeadline)
  return {
    attempt: currentAttempt(meta),
    steps: currentSteps(meta),
    timeoutMs,
    deadline: deadline ?? (timeoutMs !== undefined ? Date.now() + timeoutMs : 0),
  }
}

function earliest(a: number | undefined, b: number | undefined): number | undefined {
  return a === undefined ? b : b === undefined ? a : Math.min(a, b)
}

/** How often the unit is looked at while it runs: a cgroup's member list is cheap, a tracked sweep reads /proc. */
const POLL_MS = {cgroup: 10, tracked: 20}

/**
 * Wait until nothing of the unit is left (or `stopping()`: a timeout or a
 * stop took over, and the caller awaits its termination), then read the
 * ends the steps recorded: the first that failed, else the last. A step with
 * no recorded end makes the outcome `lost` (the Run is `exited`).
 */
export async function awaitAdoptedSteps(
  unit: Unit,
  dir: string,
  meta: RunMeta,
  resume: Resume,
  stopping: () => boolean,
): Promise<StepOutcome & {lost?: true}> {
  // This process is never a member it waits for (a reader inside the unit starts no adopter: take-over.ts).
  const others = () => unit.members().filter((pid) => pid !== process.pid)
  while (others().length > 0 && !stopping()) await sleep(POLL_MS[unit.record.kind])
  let outcome: (StepOutcome & {lost?: true}) | undefined
  for (const step of resume.steps) {
    const key = {run_instance_id: meta.run_instance_id, generation: generationOf(meta), attempt: resume.attempt, step}
    const found = readEndRecord(dir, key)
    if (!found) return {exitCode: null, signal: null, lost: true}
    if (!outcome || outcome.exitCode === 0) outcome = found
  }
  return outcome ?? {exitCode: null, signal: null, lost: true}
}
