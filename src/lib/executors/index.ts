/**
 * Which executor a Run has (SPEC: Executors): run.json's `executor.kind`
 * names it, `local` when absent. The rest of the kernel asks the Run's
 * executor (executor.ts) and never branches on the kind itself.
 */
import type {RunMeta} from '../records/run.js'
import {installExecutorQuestions} from '../runs/executor-questions.js'
import type {Executor} from './executor.js'
import {localExecutor} from './local.js'
import {slurmExecutor} from './slurm-executor.js'

export type {Executor}

const EXECUTORS: Record<string, Executor> = {local: localExecutor, slurm: slurmExecutor}

/** The executor named `kind` (`local` when unset); an unknown kind is refused where it is chosen (recipes/executor-field.ts). */
export function executorNamed(kind: string | undefined): Executor {
  return EXECUTORS[kind ?? 'local'] ?? localExecutor
}

/** The executor of the Run whose run.json is `meta` (`local` for a Run without a record). */
export function executorOf(meta: Pick<RunMeta, 'executor'> | undefined): Executor {
  const kind = (meta?.executor as {kind?: unknown} | undefined)?.kind
  return executorNamed(typeof kind === 'string' ? kind : undefined)
}

/**
 * Hand the runs layer what it asks a Run's executor on every read (is the
 * supervisor alive; must a reader poll; what is left of a lost Run to end).
 * Called once by every entry point (src/boot/) before any Run is read: the
 * runs layer sits below the executors and cannot import them.
 */
export function installExecutors(): void {
  installExecutorQuestions({
    check: (meta) => executorOf(meta).check(meta),
    pollMs: (meta) => executorOf(meta).pollMs(meta),
    endLost: (meta) => executorOf(meta).endLost(meta),
  })
}
