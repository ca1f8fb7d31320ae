/**
 * What happens once a Run is terminal, whoever settled it (its supervisor,
 * reconciliation, a control): ring the state root's doorbell so waiters and
 * live views wake, free the Run's resource locks, then the tree's follow-ups (tree/after-end.ts): queued
 * siblings start, and a stopped Run's own queued children are cancelled.
 * These take locks, so they run here, outside every lock, never inside a read
 * (see ended-runs.ts).
 */
import {takeEndedRuns} from '../../base/records/ended-runs.js'
import {releaseLocksOfEndedRun} from '../../kernel/locks/run-end.js'
import {notifyStateChange} from '../../base/bell/notify.js'
import type {RunMeta} from '../../base/records/run.js'
import {treeAfterRunEnded} from './after-end.js'

/** The follow-ups of the end of the Run `meta`. Call outside every lock. Never throws. */
export function afterRunEnded(home: string, meta: RunMeta): void {
  notifyStateChange(home)
  releaseLocksOfEndedRun(home, meta) // [locks] its slots and queue places go; the next waiter wakes
  treeAfterRunEnded(home, meta)
}

/**
 * Run the follow-ups owed for every Run this process's reads settled
 * (ended-runs.ts). Follow-ups read too and may settle more Runs, so this
 * repeats until nothing is owed. Call outside every lock; never throws.
 */
export function followUpEndedRuns(): void {
  for (let round = 0; round < 64; round++) {
    const ended = takeEndedRuns()
    if (ended.length === 0) return
    for (const {home, meta} of ended) afterRunEnded(home, meta)
  }
}
