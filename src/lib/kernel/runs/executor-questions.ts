/**
 * What the runs layer asks a Run's executor: on every read of a live Run,
 * whether its supervisor is still there (reconciliation, store.ts), what is
 * left of a lost one to end before it is settled, what a live one uses
 * (summary.ts), and whether a reader following it must poll (logs.ts). The executors sit
 * above this layer, so they hand the answers in at start-up
 * (executors/index.ts installExecutors, called by every entry point in
 * src/boot/) instead of being imported here.
 */
import type {RunMeta} from '../../base/records/run.js'
import type {SupervisorCheck} from '../../base/records/supervisor-check.js'
import type {UnitUsage} from '../containment/unit.js'

export interface ExecutorQuestions {
  /** `dir`: the state dir the Run was read from (its supervisor's command line names it). */
  check(meta: RunMeta, dir: string): SupervisorCheck
  /** End a lost Run's remaining processes (its unit) before it is written `exited`; result.json fields. */
  endLost(meta: RunMeta, dir: string): Record<string, unknown>
  /**
   * Take over a Run whose supervisor is lost (caller holds the Run's lock):
   * `adopted`, a new supervisor has it; `result`, the end the Run recorded
   * itself; undefined, nothing to take over (it is settled as lost).
   */
  takeOver(meta: RunMeta, dir: string): {adopted: RunMeta} | {result: Record<string, unknown>} | undefined
  pollMs(meta: Pick<RunMeta, 'executor'>): number | undefined
  /** CPU and memory of a live Run now; undefined when nothing of it can be read here. */
  usage(meta: RunMeta): UnitUsage | undefined
}

let installed: ExecutorQuestions | undefined

/** Install the executors' answers (once per process; a later call replaces them). */
export function installExecutorQuestions(questions: ExecutorQuestions): void {
  installed = questions
}

/** The installed answers; a process that reads Runs without installing them is a bug of its entry point. */
export function askExecutor(): ExecutorQuestions {
  if (!installed)
    throw new Error(
      'no executor is installed: the entry point must call installExecutors() (src/lib/kernel/executors/index.ts) first',
    )
  return installed
}
