/**
 * Showing a batch: writing it to stdout and knowing it was written (the
 * journal marks members reported only after this resolves, so the promise
 * must settle on the write's callback, not on the call), or the live view.
 */
import {decideOutput} from '../output.js'
import {waitForBatchLive} from '../views/wait-tty.js'
import type {BatchDocument} from './batch.js'
import {waitForBatch, type WaitOutcome, type WaitRequest} from './deliver.js'
import {renderBatchPlain} from './render.js'

/** Write text to stdout and resolve once it was handed to the OS (reject on EPIPE and the like). */
export function writeStdout(text: string): Promise<void> {
  return new Promise((resolve, reject) => {
    process.stdout.write(text, (error) => (error ? reject(error) : resolve()))
  })
}

/** A BatchPrinter for `--json` (the document) or plain output (the card). */
export function batchPrinter(json: boolean, extra?: Record<string, unknown>): (doc: BatchDocument) => Promise<void> {
  return (doc) => writeStdout(json ? JSON.stringify(extra ? {...doc, ...extra} : doc, null, 2) + '\n' : renderBatchPlain(doc))
}

/**
 * Wait for a batch and show it with the one output decision: on a TTY the
 * live pending list and the Ink card; otherwise the plain card, or the batch
 * document under `--json` (with `extra` fields, e.g. `launched` for run --wait).
 */
export async function waitAndShow(request: WaitRequest, json: boolean, extra?: Record<string, unknown>): Promise<WaitOutcome> {
  return decideOutput(json) === 'ink' ? waitForBatchLive(request) : waitForBatch(request, batchPrinter(json, extra))
}
