/**
 * Attention events: a Run asking for its coordinator before it ends
 * (`actors emit KIND --attention followup|steer`). The waiter scans the
 * Traces of its candidate Runs for such events it has not reported yet:
 * only those with attention.flag beside them, or from a version that did not
 * raise it (runs/trace.ts attentionFlagged); a per-process cache keyed by
 * Trace size keeps repeated wake-ups cheap.
 */
import {statSync} from 'node:fs'
import {readBoundedWith} from '../../base/platform/state-files.js'
import {
  MAX_TRACE_BYTES,
  WAKING_ATTENTION,
  attentionFlagged,
  eventAttention,
  traceFile,
  type TraceEvent,
} from '../../kernel/runs/trace.js'
import {boundSummary, type AttentionItem} from './batch.js'
import type {DeliveryJournal} from './journal.js'
import type {RunEntry} from './select.js'
import {compareText} from '../../base/platform/compare.js'

/** At most this many attention events in one batch; the rest come next time. */
export const MAX_ATTENTION = 64

/** How the kernel writes the field (keys verbatim): a line without it asks for nothing. */
const ATTENTION_FIELD = '"attention"'

const cache = new Map<string, {size: number; events: TraceEvent[]}>()

function wakingEvents(dir: string): TraceEvent[] {
  const file = traceFile(dir)
  const hit = cache.get(dir)
  if (hit) {
    // A later look of the same wait: a Trace that did not grow has nothing new.
    let size: number
    try {
      size = statSync(file).size
    } catch {
      return []
    }
    if (hit.size === size) return hit.events
  }
  const events: TraceEvent[] = []
  let read: {size: number; text: string | undefined} | undefined
  try {
    // Most Traces hold no attention request: those are settled from their bytes, never decoded.
    read = readBoundedWith(file, MAX_TRACE_BYTES * 4, (bytes, start, end) => {
      const asks = bytes.subarray(start, end).indexOf(ATTENTION_FIELD) !== -1
      return {size: end - start, text: asks ? bytes.toString('utf8', start, end) : undefined}
    })
  } catch {}
  if (read === undefined) return events
  // The first look reads the Trace without a stat first (a batch scans every member's): its size is what was read.
  const {size, text} = read
  if (text === undefined) {
    cache.set(dir, {size, events})
    return events
  }
  try {
    // Only lines that name the field are parsed (the kernel writes keys verbatim).
    for (const line of text.split('\n')) {
      if (!line.includes(ATTENTION_FIELD)) continue
      try {
        const e = JSON.parse(line) as TraceEvent
        const attention = e ? eventAttention(e) : undefined
        if (attention !== undefined && WAKING_ATTENTION.has(attention) && typeof e.id === 'string') events.push(e)
      } catch {}
    }
  } catch {}
  cache.set(dir, {size, events})
  return events
}

/** Unreported waking attention events of `candidates`, oldest first, excluding ones claimed by another wait. */
export function findAttention(
  candidates: RunEntry[],
  journal: DeliveryJournal,
  claimedEvents: Set<string>,
): AttentionItem[] {
  const found: AttentionItem[] = []
  for (const entry of candidates) {
    if (!attentionFlagged(entry.dir, entry.meta)) continue
    const events = wakingEvents(entry.dir)
    if (events.length === 0) continue
    const seen = journal.attention_reported[entry.meta.run]
    const reported = seen && seen.run_instance_id === entry.meta.run_instance_id ? new Set(seen.event_ids) : undefined
    for (const event of events) {
      if (event.run_instance_id && event.run_instance_id !== entry.meta.run_instance_id) continue
      if (reported?.has(event.id) || claimedEvents.has(event.id)) continue
      found.push({
        run: entry.meta.run,
        run_instance_id: entry.meta.run_instance_id,
        event_id: event.id,
        kind: event.kind,
        summary: typeof event.summary === 'string' ? boundSummary(event.summary) : null,
        attention: event.attention!,
        ts: event.ts,
      })
    }
  }
  found.sort((a, b) => compareText(a.ts, b.ts) || compareText(a.event_id, b.event_id))
  return found.slice(0, MAX_ATTENTION)
}
