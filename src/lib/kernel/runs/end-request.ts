/**
 * Where a `control stop|kill` (or `close`) was asked from, as run.json's
 * `ending.asked_from` records it. A wait leaves a Run out of its rows only
 * when its end was asked from outside its own tree (wait/ended-on-request.ts):
 * the one who stopped it knows. A Run that stops itself, or is stopped from
 * below, asked from inside: that is no decision of its owner, and it must not
 * be a way for a failing Run to drop out of its owner's batch.
 */
import type {RunMeta} from '../../base/records/run.js'
import {isInTreeOf, verifiedCallerRun} from './emit-authority.js'

export type AskedFrom = 'outside' | 'inside'
type Ending = NonNullable<RunMeta['ending']>

/** A control's mark of a Run's end, made now: the status to record, who asked (`control:slurm`, ...), from where. */
export function controlEnding(status: Ending['status'], from?: AskedFrom, by = 'control'): Ending {
  return {status, at: new Date().toISOString(), by, asked_from: from}
}

/** Whether the caller of this process asks from outside the tree of Run `target` (its lineage verified, never taken on trust). */
export function askedFrom(home: string, target: string, env: NodeJS.ProcessEnv = process.env): AskedFrom {
  let caller
  try {
    caller = verifiedCallerRun(home, env)
  } catch {
    // A unit that is no live Run of this root, or lineage variables that contradict it: nothing proves it is outside.
    return 'inside'
  }
  // Lineage variables that name no Run of this root prove nothing either.
  if (!caller && (env.ACTORS_RUN || env.ACTORS_RUN_INSTANCE)) return 'inside'
  return caller && isInTreeOf(home, caller, target) ? 'inside' : 'outside'
}
