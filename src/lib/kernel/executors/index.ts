/**
 * The executors (SPEC: Executors), as the rest of the kernel reaches them:
 * which executor a Run has (registry.ts), which one a launch gets
 * (choice.ts), and what listings say of where a Run runs. The rest of the
 * kernel asks the Run's executor (executor.ts) and never branches on its
 * kind.
 */
import {installExecutorQuestions} from '../runs/executor-questions.js'
import {describeLockHoldersWith} from '../../base/platform/file-lock.js'
import {lockHolderNote} from '../runs/lock-holder.js'
import {EXECUTORS, executorNamed, executorOf, provenExecutorOf} from './registry.js'
import {jobWhere} from './executor.js'

export type {Executor, ExecutorChoice} from './executor.js'
export {executorNamed, executorOf, provenExecutorOf}
export {chooseExecutor, EXECUTOR_KINDS, recipeExecutorSchema} from './choice.js'
export {cancelSlurmJobsByFacts} from './slurm-facts.js'
export {finishHandOvers} from './local.js'
export {liveHost, useSupervisionHost} from './host-client.js'
export {cutLooseFromARun} from './cut-loose.js'
export {supervisorEnvironment} from './supervisor-env.js'

/** What the WHERE column shows for a Run on this machine: the local executor's name. */
export const THIS_MACHINE = executorNamed(undefined).kind

/**
 * Where a listed Run runs (executor.ts describe): '' on this machine. A kind
 * no executor has (a hand-edited run.json) is shown as written.
 */
export function describeWhere(run: {executor?: string; job_id?: string | null; node?: string | null}): string {
  const known = EXECUTORS[run.executor ?? THIS_MACHINE]
  if (known) return known.describe(run)
  return jobWhere(String(run.executor), run)
}

/**
 * Why a live Run has not got further, for a waiting reader (SPEC: `wait`
 * says what it waits for): paused (with its parent, when its parent's pause
 * froze it), waiting for locks, a pending job in its engine's words, held by
 * its parent's --max-parallel; undefined for a Run that is simply running.
 */
export function pendingWhy(run: {
  status: string
  frozen?: true
  waiting_for?: string[]
  executor?: string
  job_id?: string | null
  parent?: string | null
}): string | undefined {
  if (run.status === 'paused' || run.frozen) return run.frozen ? 'paused with its parent' : 'paused'
  if (run.status !== 'queued') return undefined
  if (run.waiting_for?.length) return `waiting for lock ${run.waiting_for.join(', ')}`
  // Not handed to an engine yet (no job): a child's slot under its parent's --max-parallel comes first.
  if (!run.job_id && run.parent) return `queued behind ${run.parent}'s --max-parallel`
  return EXECUTORS[run.executor ?? THIS_MACHINE]?.queuedWhy(run) ?? 'queued'
}

/**
 * Hand the runs layer what it asks a Run's executor on every read (is the
 * supervisor alive; must a reader poll; what is left of a lost Run to end;
 * what a live Run uses), and the lock layer how to name a lock's holder
 * (which Run's cgroup it is in).
 * Called once by every entry point (src/boot/) before any Run is read: the
 * runs layer sits below the executors and cannot import them.
 */
export function installExecutors(): void {
  describeLockHoldersWith(lockHolderNote)
  installExecutorQuestions({
    check: (meta, dir) => provenExecutorOf(meta, dir).check(meta, dir),
    pollMs: (meta) => executorOf(meta).pollMs(meta),
    usage: (meta) => executorOf(meta).usage(meta),
    endLost: (meta, dir) => provenExecutorOf(meta, dir).endLost(meta, dir),
    takeOver: (meta, dir) => provenExecutorOf(meta, dir).takeOver?.(meta, dir),
  })
}
