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

/** Where an adopted Run is: its attempt, the steps it awaits, and how much of the attempt's timeout is left. */
export interface Resume {
  attempt: number
  steps: number[]
  /** When the attempt started (ms since the epoch); its timeout runs from there. */
  attemptStartedAt: number
}

/** The adopted Run's place in its plan, from run.json as the lost supervisor left it. */
export function resumeOf(meta: RunMeta): Resume {
  const started = Date.parse(meta.attempt_started_at ?? meta.started_at ?? '')
  return {
    attempt: currentAttempt(meta),
    steps: currentSteps(meta),
    attemptStartedAt: Number.isFinite(started) ? started : Date.now(),
  }
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
  while (unit.members().length > 0 && !stopping()) await sleep(POLL_MS[unit.record.kind])
  let outcome: (StepOutcome & {lost?: true}) | undefined
  for (const step of resume.steps) {
    const key = {run_instance_id: meta.run_instance_id, generation: generationOf(meta), attempt: resume.attempt, step}
    const found = readEndRecord(dir, key)
    if (!found) return {exitCode: null, signal: null, lost: true}
    if (!outcome || outcome.exitCode === 0) outcome = found
  }
  return outcome ?? {exitCode: null, signal: null, lost: true}
}
