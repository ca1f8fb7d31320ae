/**
 * What happens once a Run is terminal, whoever settled it (its supervisor,
 * reconciliation, a control): ring the state root's doorbell so waiters and
 * live views wake. Tree features (starting queued siblings) hook in here.
 */
import {notifyStateChange} from './notify.js'
import type {RunMeta} from './run-types.js'
import {treeAfterRunEnded} from './tree/after-end.js'

export function afterRunEnded(home: string, meta: RunMeta): void {
  notifyStateChange(home)
  treeAfterRunEnded(home, meta)
}
