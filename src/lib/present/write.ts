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
 * Exact: JSON text holds no raw newline but the ones the indent adds.
 */
export function jsonAtDepth(value: unknown, depth: number): string {
  const indent = '  '.repeat(depth)
  return indent + JSON.stringify(value, null, 2).replaceAll('\n', '\n' + indent)
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
