/**
 * What both completion cards (plain and Ink) show of a batch's rows: each
 * row's name, its level in the tree, and the note of Runs its own waits
 * collected. Pure: derived from the BatchDocument alone.
 */
import type {BatchDocument, BatchRow} from '../wait/batch.js'
import type {CollectedRun} from '../wait/collected.js'
import {displayRunName} from '../../base/records/generation-layout.js'
import {inertText} from '../../base/platform/text.js'

/** A row's name on a card: `build`, or `build#3 (resumed)` for a later generation of the id; inert (a Run names itself), so measured as printed. */
export function rowLabel(row: {run: string; generation?: number}): string {
  return inertText(
    row.generation !== undefined && row.generation > 1
      ? `${displayRunName(row.run, row.generation)} (resumed)`
      : row.run,
  )
}

/** A row's summary on a card: a budget crossing first, so no folding of the summary hides it. */
export function rowSummary(row: Pick<BatchRow, 'summary' | 'budget_exceeded'>): string {
  return row.budget_exceeded ? `budget exceeded; ${row.summary}` : row.summary
}

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
  return {
    header: `its own wait collected ${n} Run${n === 1 ? '' : 's'} (reported to it):`,
    // Names and statuses inert, so measured as printed; each card folds and escapes the summaries where it draws them.
    runs: row.collected.map((r) => ({...r, run: inertText(r.run), status: inertText(r.status)})),
    more: Math.max(0, n - row.collected.length),
  }
}

/**
 * The members left out of the rows as ended on request (`stopped_runs`,
 * wait/ended-on-request.ts) as one note, or undefined when there are none:
 * both cards say they were delivered, though they have no row.
 */
function stoppedNote(doc: Pick<BatchDocument, 'stopped_runs'>): string | undefined {
  const stopped = doc.stopped_runs ?? []
  if (stopped.length === 0) return undefined
  const names = stopped
    .slice(0, 5)
    .map((s) => `${s.run} ${s.status}`)
    .join(', ')
  return `stopped on request, no row: ${stopped.length} (${names}${stopped.length > 5 ? ', …' : ''})`
}

/**
 * The notes both cards print under the rows (after the overflow line): the
 * Runs stopped on request, deferred, pending, unknown or already reported,
 * and the attention requests; `oneLine` makes a Run's summary one line.
 */
export function batchNotes(doc: BatchDocument, oneLine: (text: string) => string): string[] {
  const notes: string[] = []
  const stopped = stoppedNote(doc)
  if (stopped) notes.push(stopped)
  if (doc.deferred > 0) notes.push(`next batch: ${doc.deferred} more finished Runs (run actors wait again)`)
  if (doc.pending_count > 0) {
    const names = doc.pending
      .slice(0, 5)
      .map((p) => p.run)
      .join(', ')
    notes.push(`pending: ${doc.pending_count} still live (${names}${doc.pending_count > 5 ? ', …' : ''})`)
  }
  if (doc.unknown.length > 0) notes.push(`unknown: ${doc.unknown.join(', ')}`)
  if (doc.already_reported.length > 0) notes.push(`already reported: ${doc.already_reported.join(', ')}`)
  for (const a of doc.attention)
    notes.push(`attention: ${a.run} ${a.attention} ${a.kind}${a.summary ? `: ${oneLine(a.summary)}` : ''}`)
  return notes
}
