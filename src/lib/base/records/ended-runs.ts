/**
 * Runs that a read in this process settled: reconciliation found a live Run's
 * supervisor gone and wrote its `exited` result. A read only settles files,
 * because it may run under a lock (admission reads a parent's children while
 * holding its children lock) and the follow-ups of an end take locks of their
 * own (releasing queued siblings takes that same, non-reentrant lock). So the
 * read notes the Run here and returns; the follow-ups run later, outside every
 * lock, in after-run.ts's followUpEndedRuns(), which both front ends call
 * after every command and the long-running ones (wait, live views) after each
 * look. This module imports nothing of the kernel, so reads stay at the
 * bottom of the import graph.
 */
import type {RunMeta} from './run.js'

export interface EndedRun {
  home: string
  meta: RunMeta
}

const owed: EndedRun[] = []

/** Note that this process settled the Run `meta` of state root `home`; its follow-ups are owed. */
export function noteEndedRun(home: string, meta: RunMeta): void {
  owed.push({home, meta})
}

/** Take (and forget) every Run noted so far, oldest first. */
export function takeEndedRuns(): EndedRun[] {
  return owed.splice(0)
}
