/**
 * The plain completion card (no colour, no escape codes; pipes and CI): the
 * counts by status, one line per row indented under its parent, the overflow,
 * what is still pending, attention requests and the `actors inspect` hint.
 * Pure: it draws a BatchDocument and nothing else.
 */
import {formatDuration} from '../../base/platform/duration.js'
import type {BatchDocument} from '../../services/wait/batch.js'
import {compareText} from '../../base/platform/compare.js'
import {inertText, printableLine} from '../../base/platform/text.js'
import {batchNotes, collectedNote, rowLabel, rowLevels, rowSummary} from '../../services/view-state/batch-rows.js'

const ONE_LINE = 100

/** A summary as one printable line: a Run's own escape codes and line breaks never reach the reader's terminal. */
const oneLine = (text: string) => printableLine(text, ONE_LINE)

/** Render the batch as plain text lines ending with a newline. */
export function renderBatchPlain(doc: BatchDocument): string {
  const lines: string[] = []
  const counts = Object.entries(doc.counts)
    .sort(([a], [b]) => compareText(a, b))
    .map(([status, n]) => `${n} ${status}`)
  const head =
    doc.members === 0 ? 'no finished Runs' : `${doc.members} Run${doc.members === 1 ? '' : 's'}: ${counts.join(', ')}`
  lines.push(
    `${head}${doc.timed_out ? ' (timed out)' : ''}${doc.redelivered ? ' (redelivered)' : ''}  batch ${doc.batch_id.slice(0, 8)}`,
  )
  const levels = rowLevels(doc)
  const width = Math.min(40, Math.max(0, ...doc.rows.map((r, i) => rowLabel(r).length + levels[i] * 2)))
  doc.rows.forEach((row, i) => {
    const name = `${'  '.repeat(levels[i])}${rowLabel(row)}`.padEnd(width)
    lines.push(
      `  ${name}  ${row.status.padEnd(9)} ${formatDuration(row.duration_ms ?? undefined).padStart(6)}  ${oneLine(rowSummary(row))}`.trimEnd(),
    )
    const note = collectedNote(row)
    if (note) {
      const indent = '  '.repeat(levels[i] + 2)
      const runWidth = Math.min(40, Math.max(0, ...note.runs.map((r) => r.run.length)))
      lines.push(`${indent}${note.header}`)
      for (const r of note.runs)
        lines.push(`${indent}↳ ${r.run.padEnd(runWidth)}  ${r.status.padEnd(9)} ${oneLine(r.summary)}`.trimEnd())
      if (note.more > 0) lines.push(`${indent}… ${note.more} more`)
    }
  })
  if (doc.overflow > 0) lines.push(`  … ${doc.overflow} more not shown`)
  lines.push(...batchNotes(doc, oneLine))
  lines.push(`more: ${doc.hint}`)
  // Names, kinds and statuses come from files a Run can write: every line inert, whatever it holds.
  return lines.map((line) => inertText(line)).join('\n') + '\n'
}
