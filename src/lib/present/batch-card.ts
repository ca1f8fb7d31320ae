/**
 * The plain completion card (no colour, no escape codes; pipes and CI): the
 * counts by status, one line per row indented under its parent, the overflow,
 * what is still pending, attention requests and the `actors inspect` hint.
 * Pure: it draws a BatchDocument and nothing else.
 */
import {formatDuration} from '../platform/duration.js'
import type {BatchDocument, BatchRow} from '../wait/batch.js'
import type {CollectedRun} from '../wait/collected.js'
import {compareText} from '../platform/compare.js'
import {printableLine} from '../platform/text.js'
import {displayRunName} from '../records/generation-layout.js'

/** A row's name on a card: `build`, or `build#3 (resumed)` for a later generation of the id. */
export function rowLabel(row: {run: string; generation?: number}): string {
  return row.generation !== undefined && row.generation > 1 ? `${displayRunName(row.run, row.generation)} (resumed)` : row.run
}

const ONE_LINE = 100

/** A summary as one printable line: a Run's own escape codes and line breaks never reach the reader's terminal. */
const oneLine = (text: string) => printableLine(text, ONE_LINE)

/** Tree level of each row inside the batch: 0 for a top, parent's + 1 when the parent is a row too. */
export function rowLevels(doc: BatchDocument): number[] {
  const level = new Map<string, number>()
  return doc.rows.map((row) => {
    const value = row.parent !== null && level.has(row.parent) ? level.get(row.parent)! + 1 : 0
    level.set(row.run, value)
    return value
  })
}

/** What goes under a row whose own waits collected Runs (reported to it, so not rows of this batch). */
export interface CollectedNote {
  header: string
  runs: CollectedRun[]
  /** Collected Runs not listed. */
  more: number
}

/** The collected-Runs note of a row, or undefined when its waits collected nothing (plain and Ink cards alike). */
export function collectedNote(row: Pick<BatchRow, 'collected' | 'collected_total'>): CollectedNote | undefined {
  if (!row.collected_total) return undefined
  const n = row.collected_total
  return {header: `its own wait collected ${n} Run${n === 1 ? '' : 's'} (reported to it):`, runs: row.collected, more: Math.max(0, n - row.collected.length)}
}

/** Render the batch as plain text lines ending with a newline. */
export function renderBatchPlain(doc: BatchDocument): string {
  const lines: string[] = []
  const counts = Object.entries(doc.counts)
    .sort(([a], [b]) => compareText(a, b))
    .map(([status, n]) => `${n} ${status}`)
  const head = doc.members === 0 ? 'no finished Runs' : `${doc.members} Run${doc.members === 1 ? '' : 's'}: ${counts.join(', ')}`
  lines.push(`${head}${doc.timed_out ? ' (timed out)' : ''}${doc.redelivered ? ' (redelivered)' : ''}  batch ${doc.batch_id.slice(0, 8)}`)
  const levels = rowLevels(doc)
  const width = Math.min(40, Math.max(0, ...doc.rows.map((r, i) => rowLabel(r).length + levels[i] * 2)))
  doc.rows.forEach((row, i) => {
    const name = `${'  '.repeat(levels[i])}${rowLabel(row)}`.padEnd(width)
    lines.push(`  ${name}  ${row.status.padEnd(9)} ${formatDuration(row.duration_ms ?? undefined).padStart(6)}  ${oneLine(row.summary)}`.trimEnd())
    const note = collectedNote(row)
    if (note) {
      const indent = '  '.repeat(levels[i] + 2)
      const runWidth = Math.min(40, Math.max(0, ...note.runs.map((r) => r.run.length)))
      lines.push(`${indent}${note.header}`)
      for (const r of note.runs) lines.push(`${indent}↳ ${r.run.padEnd(runWidth)}  ${r.status.padEnd(9)} ${oneLine(r.summary)}`.trimEnd())
      if (note.more > 0) lines.push(`${indent}… ${note.more} more`)
    }
  })
  if (doc.overflow > 0) lines.push(`  … ${doc.overflow} more not shown`)
  if (doc.deferred > 0) lines.push(`next batch: ${doc.deferred} more finished Runs (run actors wait again)`)
  if (doc.pending_count > 0) {
    const names = doc.pending.slice(0, 5).map((p) => p.run).join(', ')
    lines.push(`pending: ${doc.pending_count} still live (${names}${doc.pending_count > 5 ? ', …' : ''})`)
  }
  if (doc.unknown.length > 0) lines.push(`unknown: ${doc.unknown.join(', ')}`)
  if (doc.already_reported.length > 0) lines.push(`already reported: ${doc.already_reported.join(', ')}`)
  for (const a of doc.attention) lines.push(`attention: ${a.run} ${a.attention} ${a.kind}${a.summary ? `: ${oneLine(a.summary)}` : ''}`)
  lines.push(`more: ${doc.hint}`)
  return lines.join('\n') + '\n'
}
