/**
 * Showing a wait (`actors wait`, `run --wait`): on a TTY the live pending
 * list and the Ink card; otherwise the plain card, or the batch document
 * under `--json` (with `extra` fields, e.g. `launched` for run --wait).
 * The journal marks members reported only after a printer resolves, so a
 * printer settles on the write's callback, not on the call.
 */
import {importView} from '../../base/platform/esm-import.js'
import {listActiveSummaries} from '../../kernel/history/inspect.js'
import {createStateStore} from '../../services/view-state/runs-store.js'
import {WaitTracker} from '../../services/view-state/wait-tracker.js'
import {inertText} from '../../base/platform/text.js'
import {unknownRunsProblem, type BatchDocument} from '../../services/wait/batch.js'
import {waitForBatch, type WaitOutcome, type WaitRequest} from '../../services/wait/deliver.js'
import {renderBatchPlain} from './batch-card.js'
import {exitResult, liveResult, type LiveResult} from './result.js'
import {printJsonAcknowledged, writeNote, writeStdout} from './write.js'

export interface WaitShowing {
  /** Fields added to the JSON document (`launched` for run --wait). */
  extra?: Record<string, unknown>
  /** Said on stderr before waiting, except under --json. */
  note?: string
  /** The text of --timeout, for the timed-out message. */
  timeout?: string
}

/** Wait for one batch and show it, then what its outcome means: the exit code, and on stderr why nothing was shown (4, 124). */
export function waitResult(request: WaitRequest, showing: WaitShowing = {}): LiveResult {
  const {extra, note} = showing
  const finish = (outcome: WaitOutcome) => exitResult(outcome.exitCode, outcomeNote(outcome, showing.timeout))
  return liveResult({
    json: async () =>
      finish(
        await waitForBatch(request, (doc: BatchDocument) => printJsonAcknowledged(extra ? {...doc, ...extra} : doc)),
      ),
    plain: async () => {
      if (note) writeNote(note)
      // Piped, nothing shows until the batch: say now what holds a Run back (a pending job, a lock, a pause).
      const held = heldBack(request)
      if (held) writeNote(held)
      return finish(await waitForBatch(request, (doc: BatchDocument) => writeStdout(renderBatchPlain(doc))))
    },
    ink: async () => {
      if (note) writeNote(note)
      return finish(await waitForBatchLive(request))
    },
  })
}

/** One stderr line naming the waited-for Runs that something holds back, and what; undefined when none is. */
function heldBack(request: WaitRequest): string | undefined {
  const progress = new WaitTracker({owner: request.owner, ids: request.ids, within: request.scope}).update(
    listActiveSummaries(request.home),
  )
  const held = progress.pending.flatMap((run) => {
    const why = progress.why.get(run.state_dir)
    return why ? [`${inertText(run.run)} (${inertText(why)})`] : []
  })
  if (!held.length) return undefined
  const shown = held.slice(0, 5).join(', ') + (held.length > 5 ? `, and ${held.length - 5} more` : '')
  return `actors: waiting for ${progress.pending.length} ${progress.pending.length === 1 ? 'Run' : 'Runs'}; held back: ${shown}\n`
}

/** Why a wait showed no batch: every RUN unknown (exit 4) or nothing ready in time (exit 124). */
function outcomeNote(outcome: WaitOutcome, timeout: string | undefined): string | undefined {
  const doc = outcome.document
  if (outcome.exitCode === 4) {
    const problem = unknownRunsProblem(doc)
    return `actors: ${problem.message}\n  fix: ${problem.fix}\n`
  }
  if (outcome.exitCode === 124)
    return `actors: timed out after ${timeout} with nothing ready (${doc.pending_count} still live)\n`
  return undefined
}

/** Wait for a batch as `waitForBatch` does, drawing progress and the card with Ink (loads ink and react only when called). */
async function waitForBatchLive(request: WaitRequest): Promise<WaitOutcome> {
  const {showWait} = await importView<typeof import('../../../views/wait-live.js')>('wait-live')
  const store = createStateStore(request.home, () => listActiveSummaries(request.home), {tickMs: 1000})
  try {
    return await showWait(store, {owner: request.owner, ids: request.ids, within: request.scope}, (print) =>
      waitForBatch(request, print),
    )
  } finally {
    store.close()
  }
}
