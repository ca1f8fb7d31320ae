/**
 * The Ink path of `actors wait` / `run --wait` (dynamic import() on a TTY
 * only). The wait service decides the batch; this draws the progress from
 * the Runs store and hands the service a printer that draws the card and
 * resolves once it is written, so members are marked reported only then.
 */
import {render} from 'ink'
import type {RunListing} from '../lib/kernel/history/inspect.js'
import {AttentionFeed} from '../lib/services/view-state/attention-feed.js'
import {cardModel} from '../lib/services/view-state/card-model.js'
import type {StateStore} from '../lib/services/view-state/runs-store.js'
import {WaitTracker, type WaitScope} from '../lib/services/view-state/wait-tracker.js'
import type {BatchDocument} from '../lib/services/wait/batch.js'
import {WaitView, type WaitItem} from './wait-view.js'

/** Show progress from `store` while `wait` runs; `wait` gets the printer for its batch. */
export async function showWait<T>(
  store: StateStore<RunListing>,
  scope: WaitScope,
  wait: (print: (doc: BatchDocument) => Promise<void>) => Promise<T>,
): Promise<T> {
  // Events since the command started (loading the view takes a moment): those are news.
  const tracker = new WaitTracker(scope, new AttentionFeed(Math.floor(performance.timeOrigin)))
  let progress = tracker.update(store.snapshot().data)
  let card: BatchDocument | undefined
  const frame = () => {
    const snapshot = store.snapshot()
    const items: WaitItem[] = progress.log.map((item) =>
      item.kind === 'finished' ? {kind: 'finished', run: item.run} : {kind: 'attention', note: item.note},
    )
    if (card) items.push({kind: 'card', card: cardModel(card)})
    return (
      <WaitView
        items={items}
        pending={card ? [] : progress.pending}
        pendingTree={card ? [] : progress.pendingTree}
        waitingFor={card ? 0 : progress.waitingFor}
        why={progress.why}
        clock={snapshot}
        maxPending={(process.stdout.rows || 24) - 4}
      />
    )
  }
  const instance = render(frame(), {exitOnCtrlC: false, patchConsole: false})
  const unsubscribe = store.subscribe(() => {
    progress = tracker.update(store.snapshot().data)
    instance.rerender(frame())
  })
  try {
    return await wait(async (doc) => {
      unsubscribe()
      // Read now: the Run that just ended may not have reached the (debounced) store yet,
      // and every finished Run gets its scrollback line before the card.
      store.refresh()
      progress = tracker.update(store.snapshot().data)
      card = doc
      instance.rerender(frame())
      instance.unmount()
      await instance.waitUntilExit()
      // Resolve only once the card reached the OS (the journal marks members reported after this).
      await new Promise<void>((resolve, reject) =>
        process.stdout.write('', (error) => (error ? reject(error) : resolve())),
      )
    })
  } finally {
    unsubscribe()
    instance.unmount()
  }
}
