/**
 * The executors there are, by the kind run.json's `executor.kind` names
 * (`local` when absent), and how to find a Run's.
 */
import {DEFAULT_EXECUTOR_KIND, type RunMeta} from '../records/run.js'
import type {Executor} from './executor.js'
import {localExecutor} from './local.js'
import {slurmExecutor} from './slurm-executor.js'

export const EXECUTORS: Readonly<Record<string, Executor>> = {local: localExecutor, slurm: slurmExecutor}

/** The executor named `kind` (`local` when unset); an unknown kind is refused where it is chosen (choice.ts). */
export function executorNamed(kind: string | undefined): Executor {
  return EXECUTORS[kind ?? DEFAULT_EXECUTOR_KIND] ?? localExecutor
}

/** The executor of the Run whose run.json is `meta` (`local` for a Run without a record). */
export function executorOf(meta: Pick<RunMeta, 'executor'> | undefined): Executor {
  const kind = (meta?.executor as {kind?: unknown} | undefined)?.kind
  return executorNamed(typeof kind === 'string' ? kind : undefined)
}
