/**
 * Writing a batch to stdout and knowing it was written: the journal marks
 * members reported only after this resolves, so the promise must settle on
 * the write's callback, not on the call.
 */
import type {BatchDocument} from './batch.js'
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
