/**
 * The executors there are, by the kind run.json's `executor.kind` names
 * (`local` when absent), and how to find a Run's.
 */
import {supervisorArgs} from '../../base/records/supervisor-args.js'
import {DEFAULT_EXECUTOR_KIND, type RunMeta} from '../../base/records/run.js'
import type {Executor} from './executor.js'
import {localExecutorWith} from './local.js'
import {slurmExecutor} from './slurm-executor.js'
import {slurmJobHost} from './slurm.js'

/** This machine's executor, told which engines' jobs can hold its Runs. */
const localExecutor = localExecutorWith([slurmJobHost])

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

/**
 * The executor of the Run in `dir` as the facts say, for acting on it and
 * settling it (SPEC: Containment, only proven targets). run.json's
 * `executor` is a claim the Run can rewrite: a local Run that names itself a
 * Slurm job would send `kill` to Slurm (a foreign job, or a controller that
 * does not answer) and be read as ended while it runs. So when the Run's
 * recorded supervisor is alive on this machine, the kind it was started as
 * decides: its command line says it (`dist/supervisor.cjs DIR KIND`), and a Run
 * cannot rewrite another process's command line. Otherwise the record's.
 */
export function provenExecutorOf(meta: RunMeta | undefined, dir: string): Executor {
  const kind = meta ? supervisorKindHere(meta, dir) : undefined
  return kind ? executorNamed(kind) : executorOf(meta)
}

/** The kind the live supervisor of the Run in `dir` was started as, read from its command line; undefined when none runs here. */
function supervisorKindHere(meta: RunMeta, dir: string): string | undefined {
  const kind = supervisorArgs(meta, dir)?.kind
  return kind && Object.hasOwn(EXECUTORS, kind) ? kind : undefined
}
