/**
 * `actors wait` and `run --wait` on a TTY: the same wait service, with the
 * Ink progress view and card as its printer. Loads the view (and so ink and
 * react) only when called.
 */
import {importView} from '../esm-import.js'
import {listActiveSummaries} from '../inspect.js'
import {waitForBatch, type WaitOutcome, type WaitRequest} from '../wait/deliver.js'
import {createStateStore} from './runs-store.js'

/** Wait for a batch as `waitForBatch` does, drawing progress and the card with Ink. */
export async function waitForBatchLive(request: WaitRequest): Promise<WaitOutcome> {
  const {showWait} = await importView<typeof import('../../views/wait-live.js')>('wait-live')
  const store = createStateStore(request.home, () => listActiveSummaries(request.home), {tickMs: 1000})
  try {
    return await showWait(store, {owner: request.owner, ids: request.ids, within: request.scope}, (print) => waitForBatch(request, print))
  } finally {
    store.close()
  }
}
