/**
 * What happens once a Run is terminal, whoever settled it (its supervisor,
 * reconciliation, a control): ring the state root's doorbell so waiters and
 * live views wake, then the tree's follow-ups (tree/after-end.ts): queued
 * siblings start, and a stopped Run's own queued children are cancelled.
 */
import {notifyStateChange} from './notify.js'
import type {RunMeta} from './run-types.js'
import {treeAfterRunEnded} from './tree/after-end.js'

export function afterRunEnded(home: string, meta: RunMeta): void {
  notifyStateChange(home)
  treeAfterRunEnded(home, meta)
}
