/**
 * A closed Run id (SPEC: Generations and steering, `actors close`): the
 * coordinator retired it, so nothing may start it again or move it into a
 * tree. Reading it (inspect, logs) and pruning it stay allowed.
 */
import {refusedError} from '../../base/platform/errors.js'
import type {RunMeta} from '../../base/records/run.js'

/** Whether `meta` says the Run id was closed. */
export function isClosed(meta: Pick<RunMeta, 'closed'> | undefined | null): boolean {
  return meta?.closed === true
}

/**
 * Refuse (exit 5) a new generation (`send`, `rerun`, `run --name`) or an
 * adoption of a closed Run id; checked under the Run's lock where it starts
 * a generation, and up front where a command would do other work first.
 */
export function refuseClosed(meta: Pick<RunMeta, 'closed' | 'closed_at' | 'run'> | undefined | null): void {
  if (!meta || !isClosed(meta)) return
  throw refusedError(
    `${meta.run} is closed; start a new Run`,
    `launch a new Run under another name (actors run RECIPE --name NEW); actors inspect ${meta.run} and actors logs ${meta.run} still read it`,
    {run: meta.run, closed: true, ...(meta.closed_at ? {closed_at: meta.closed_at} : {})},
  )
}
