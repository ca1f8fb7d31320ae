/**
 * The one output decision every command makes: `--json` → one JSON document;
 * stdout not a TTY, `CI` set or `TERM=dumb` → plain lines without escape codes;
 * otherwise an Ink view, loaded with dynamic import() only then.
 */
export type OutputMode = 'json' | 'plain' | 'ink'

export function decideOutput(json: boolean, stream: NodeJS.WriteStream = process.stdout): OutputMode {
  if (json) return 'json'
  if (!stream.isTTY) return 'plain'
  if (process.env.CI !== undefined && process.env.CI !== '' && process.env.CI !== 'false' && process.env.CI !== '0') return 'plain'
  if (process.env.TERM === 'dumb') return 'plain'
  return 'ink'
}

/** Whether to colour plain output written to `stream` (never when piped or NO_COLOR is set). */
export function useColor(stream: NodeJS.WriteStream = process.stderr): boolean {
  if (process.env.NO_COLOR !== undefined && process.env.NO_COLOR !== '') return false
  if (process.env.TERM === 'dumb') return false
  return Boolean(stream.isTTY)
}

const CODES = {red: 31, green: 32, yellow: 33, blue: 34, magenta: 35, cyan: 36, gray: 90, bold: 1, dim: 2} as const
export type ColorName = keyof typeof CODES

/** Wrap `text` in an ANSI colour when `enabled`. */
export function paint(text: string, color: ColorName, enabled: boolean): string {
  return enabled ? `\u001B[${CODES[color]}m${text}\u001B[0m` : text
}

/** Print one JSON document on stdout. */
export function printJson(value: unknown): void {
  process.stdout.write(JSON.stringify(value, null, 2) + '\n')
}

/** Render rows as aligned columns (plain text). */
export function formatTable(headers: string[], rows: string[][]): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)))
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
