/**
 * What happens once a Run is terminal, whoever settled it (its supervisor,
 * reconciliation, a control): ring the state root's doorbell so waiters and
 * live views wake, free the Run's resource locks, then the tree's follow-ups (tree/after-end.ts): queued
 * siblings start, and a stopped Run's own queued children are cancelled.
 */
import {releaseLocksOfEndedRun} from './locks/run-end.js'
import {notifyStateChange} from './notify.js'
import type {RunMeta} from './run-types.js'
import {treeAfterRunEnded} from './tree/after-end.js'

export function afterRunEnded(home: string, meta: RunMeta): void {
  notifyStateChange(home)
  releaseLocksOfEndedRun(home, meta) // [locks] its slots and queue places go; the next waiter wakes
  treeAfterRunEnded(home, meta)
}
