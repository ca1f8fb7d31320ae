/**
 * The completion card as the Ink view draws it: a BatchDocument (the same one
 * `wait --json` prints and the plain card renders) turned into display lines,
 * so the component only lays them out.
 */
import {formatDuration} from '../../base/platform/duration.js'
import type {BatchDocument} from '../wait/batch.js'
import {batchNotes, collectedNote, rowLabel, rowLevels, rowSummary, type CollectedNote} from './batch-rows.js'
import {countByStatus} from './run-rows.js'
import {inertText, printableLine} from '../../base/platform/text.js'

export interface CardRow {
  key: string
  /** Tree level inside the batch (0 for a top). */
  level: number
  run: string
  status: string
  duration: string
  summary: string
  /** `name (123 B)` per artifact, `+N more` when the row holds more than it lists. */
  artifacts: string[]
  /** The Runs this Run's own waits collected (reported to it), shown under it. */
  collected?: CollectedNote
}

export interface CardModel {
  title: string
  counts: Array<[string, number]>
  rows: CardRow[]
  /** Overflow, deferred, pending, unknown, attention: one line each. */
  notes: string[]
  hint: string
}

/** One printable line (no escape codes or line breaks from a Run's own text); the view truncates to its width. */
const oneLine = (text: string) => printableLine(text, 1000)

function artifactLabel(a: {name: string; bytes: number | null; missing?: boolean}): string {
  return a.missing || a.bytes === null ? `${a.name} (missing)` : `${a.name} (${a.bytes} B)`
}

/** Build the card of a batch. */
export function cardModel(doc: BatchDocument): CardModel {
  const levels = rowLevels(doc)
  const counts = countByStatus(
    Object.entries(doc.counts).flatMap(([status, n]) => Array.from({length: n}, () => ({status}))),
  )
  const flags = [doc.timed_out ? 'timed out' : '', doc.redelivered ? 'redelivered' : ''].filter(Boolean).join(', ')
  const title = `${doc.members === 0 ? 'no finished Runs' : `${doc.members} Run${doc.members === 1 ? '' : 's'} finished`}${flags ? ` (${flags})` : ''} · batch ${doc.batch_id.slice(0, 8)}`
  const rows = doc.rows.map((row, i) => ({
    key: `${row.run}/${row.run_instance_id}`,
    level: levels[i] ?? 0,
    run: rowLabel(row),
    status: inertText(row.status),
    duration: formatDuration(row.duration_ms ?? undefined),
    summary: oneLine(rowSummary(row)),
    artifacts: [
      ...row.artifacts.map((a) => inertText(artifactLabel(a))),
      ...(row.artifacts_total > row.artifacts.length ? [`+${row.artifacts_total - row.artifacts.length} more`] : []),
    ],
    collected: collectedNote(row),
  }))
  const notes = [...(doc.overflow > 0 ? [`… ${doc.overflow} more not shown`] : []), ...batchNotes(doc, oneLine)]
  // Run names, kinds and statuses come from files a Run can write.
  return {title, counts, rows, notes: notes.map((note) => inertText(note)), hint: doc.hint}
}
