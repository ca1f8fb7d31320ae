/**
 * The tree's part of "a Run ended" (called from after-run.ts by whoever
 * settled the Run): a slot of its parent's max-parallel cap is free, so start
 * the next queued sibling; and if it was stopped or killed, its own queued
 * children will never be wanted, so cancel them.
 */
import {runDir} from '../../base/platform/home.js'
import type {RunMeta} from '../../base/records/run.js'
import {releaseQueuedChildren} from '../launch/child-queue.js'
import {traceChildEnded} from '../../kernel/runs/child-events.js'

/** Start queued siblings of `meta`'s Run and settle its own queue. Never throws. */
export function treeAfterRunEnded(home: string, meta: RunMeta): void {
  traceChildEnded(home, meta) // runtime.child_ended in the parent's current Trace (child-events.ts)
  try {
    if (meta.parent) releaseQueuedChildren(home, runDir(home, meta.parent.run))
    releaseQueuedChildren(home, runDir(home, meta.run))
  } catch {}
}
