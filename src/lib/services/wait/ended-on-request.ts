/**
 * Runs ended by an explicit `control stop|kill` (or `close`) from outside
 * their own tree are left out of the rows of a wait that did not name them
 * (SPEC: Exit codes): the one who stopped them knows. They are still members
 * (marked reported, counted under `counts` and listed in `stopped_runs`).
 *
 * What is read is run.json's `ending`, which the kernel's control writes
 * under the Run's lock with `asked_from` (runs/end-request.ts): a Run that
 * stops itself, or is stopped from below, asked from inside and keeps its
 * row, and nothing a Run emits (Trace events of any kind) counts. A Run
 * runs as its owner's user, so one that rewrites its own run.json directly
 * could forge the mark; such a Run could as well write its reported.json, so
 * this is no new hole: the state root trusts its user's processes' files.
 */
import {askedByControl} from '../../base/records/run.js'
import type {BatchMeta, RunEntry} from './select.js'

/** Whether the Run ended because someone outside its tree asked the kernel to stop or kill it. */
export function endedOnRequest(meta: BatchMeta): boolean {
  const ending: unknown = meta.ending
  return askedByControl(ending) && ending.asked_from === 'outside' && meta.status === ending.status
}

/** The members that get rows: all but those ended on request, unless the wait named them (`wait RUN` answers RUN). */
export function shownMembers(members: RunEntry[], named: readonly string[] | undefined): RunEntry[] {
  return members.filter((m) => !endedOnRequest(m.meta) || named?.includes(m.meta.run) === true)
}
