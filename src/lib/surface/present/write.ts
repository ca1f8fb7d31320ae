/**
 * The one writer of stdout (the Ink views aside, which draw through ink):
 * a JSON document, an NDJSON line, plain text, each optionally acknowledged
 * once handed to the OS. Every command's `--json` output goes through here,
 * so its format (two-space indent, trailing newline; NDJSON: one compact
 * object a line) is decided once.
 */
import {writeWhole} from './output-guard.js'

/**
 * Write text to stdout and resolve once it was handed to the OS (reject on
 * EPIPE and the like). Through writeWhole: a wait's batch goes out in one
 * write(2) without building process.stdout, which for a pipe loads the net
 * and stream modules while the reader is waiting for the batch.
 */
export function writeStdout(text: string): Promise<void> {
  return new Promise((resolve, reject) => {
    writeWhole(text, (error) => (error ? reject(error) : resolve()))
  })
}

/** Plain text on stdout, not waited for. */
export function writeOut(text: string | Uint8Array): void {
  process.stdout.write(text)
}

/** Human text on stderr. */
export function writeNote(text: string | Uint8Array): void {
  process.stderr.write(text)
}

/** One JSON document as printed: indented, ending with a newline. */
export function jsonDocument(value: unknown): string {
  return JSON.stringify(value, null, 2) + '\n'
}

/**
 * `value`'s text as jsonDocument() prints it at `depth` inside a document
 * (an array element of a top-level field: depth 2), first line indented too.
 * Made by JSON.stringify itself, `value` nested in `depth` arrays, whose
 * brackets are then cut off: one pass, where re-indenting each line of the
 * text after the fact cost a cold listing of 2,000 Runs about 1.5 ms more.
 */
export function jsonAtDepth(value: unknown, depth: number): string {
  let nested: unknown = value
  let frame = 0
  for (let level = 0; level < depth; level++) {
    nested = [nested]
    // The opening `[` and newline of each level, and its newline and closing `]`, around the value's text.
    frame += 2 * level + 2
  }
  const text = JSON.stringify(nested, null, 2)
  return depth === 0 ? text : text.slice(frame, -frame)
}

/** Print one JSON document on stdout (in one write(2) when nothing made process.stdout yet: see writeWhole). */
export function printJson(value: unknown): void {
  writeWhole(jsonDocument(value))
}

/** Print one JSON document on stdout and resolve once it was handed to the OS (a batch is marked reported only then). */
export function printJsonAcknowledged(value: unknown): Promise<void> {
  return writeStdout(jsonDocument(value))
}

/** One NDJSON line on stdout: an event of a stream (`--follow`, `--watch` under --json). */
export function writeNdjson(value: unknown): void {
  process.stdout.write(JSON.stringify(value) + '\n')
}
