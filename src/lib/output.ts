/**
 * The one output decision every command makes: `--json` → one JSON document;
 * stdout not a TTY, `CI` set or `TERM=dumb` → plain lines without escape codes;
 * otherwise an Ink view, loaded with dynamic import() only then.
 */
import {writeStdout} from './output-guard.js'

export type OutputMode = 'json' | 'plain' | 'ink'

export function decideOutput(json: boolean, stream?: NodeJS.WriteStream): OutputMode {
  if (json) return 'json'
  // Only now: making process.stdout costs start-up time a --json command need not pay.
  if (!(stream ?? process.stdout).isTTY) return 'plain'
  if (process.env.CI !== undefined && process.env.CI !== '' && process.env.CI !== 'false' && process.env.CI !== '0') return 'plain'
  if (process.env.TERM === 'dumb') return 'plain'
  return 'ink'
}

/** Print one JSON document on stdout, in one write. */
export function printJson(value: unknown): void {
  writeStdout(JSON.stringify(value, null, 2) + '\n')
}

/** Width of each column so `rows` of cells line up under `headers` (the plain table and the Ink one alike). */
export function columnWidths(headers: string[], rows: string[][]): number[] {
  return headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)))
}

/** Render rows as aligned columns (plain text). */
export function formatTable(headers: string[], rows: string[][]): string {
  const widths = columnWidths(headers, rows)
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i])))
      .join('  ')
      .trimEnd()
  return [line(headers), ...rows.map(line)].join('\n')
}

/**
 * Text a Run wrote (a Trace summary) as one printable line: control characters
 * (escape sequences, bells, line breaks) become spaces so a Run can neither
 * drive the reader's terminal nor fake extra lines; long text is cut with "…".
 */
export function printableLine(text: string, max = 200): string {
  const flat = text.replace(/[\s\u0000-\u001f\u007f-\u009f]+/g, ' ').trim()
  return flat.length > max ? flat.slice(0, max - 1) + '…' : flat
}
