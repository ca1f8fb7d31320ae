/**
 * Attention as it happens, for the live views (`inspect --watch`, the live
 * `wait`): events a Run emitted with `--attention` (notify, followup, steer)
 * since the view opened, each once, oldest first. `notify` shows nowhere
 * else (SPEC: Completion batches). Each look stats the Traces of the Runs in
 * view that are live (or were at the last look: an event emitted just before
 * the end still shows) and parses only the lines that name the field.
 */
import {closeSync, fstatSync, openSync, readSync} from 'node:fs'
import {MAX_TRACE_BYTES, eventAttention, traceFile, type Attention, type TraceEvent} from '../../kernel/runs/trace.js'
import {isTerminal} from '../../base/records/run.js'
import {printableLine} from '../../base/platform/text.js'

export interface AttentionNote {
  run: string
  event_id: string
  ts: string
  kind: string
  summary: string | null
  attention: Attention
}

/** A Run in view: its state dir, the name shown, its status. */
export interface WatchedRun {
  dir: string
  run: string
  status: string
}

const ATTENTION_FIELD = '"attention"'

/** Collects attention events of the Runs in view that are newer than the view. */
export class AttentionFeed {
  /** Where the next look at each Trace starts (bytes already read). */
  private readonly offsets = new Map<string, number>()
  private readonly seen = new Set<string>()
  private readonly liveBefore = new Set<string>()

  /** `since` (ms): older events are history, not news. */
  constructor(private readonly since = Date.now()) {}

  /** The new notes among `runs` since the last look. */
  update(runs: Iterable<WatchedRun>): AttentionNote[] {
    const notes: AttentionNote[] = []
    for (const run of runs) {
      const live = !isTerminal(run.status)
      const look = live || this.liveBefore.has(run.dir)
      if (live) this.liveBefore.add(run.dir)
      else this.liveBefore.delete(run.dir)
      if (look) notes.push(...this.read(run))
    }
    return notes.sort((a, b) => (a.ts < b.ts ? -1 : a.ts > b.ts ? 1 : 0))
  }

  private read(run: WatchedRun): AttentionNote[] {
    const text = this.newLines(run.dir)
    const notes: AttentionNote[] = []
    for (const line of text.split('\n')) {
      if (!line.includes(ATTENTION_FIELD)) continue
      let event: TraceEvent
      try {
        event = JSON.parse(line) as TraceEvent
      } catch {
        continue
      }
      if (!event || typeof event.id !== 'string' || this.seen.has(event.id)) continue
      const attention = eventAttention(event)
      if (attention === undefined) continue
      if (!(Date.parse(event.ts) >= this.since)) continue
      this.seen.add(event.id)
      notes.push({
        run: run.run,
        event_id: event.id,
        ts: event.ts,
        kind: event.kind,
        summary: event.summary ?? null,
        attention,
      })
    }
    return notes
  }

  /**
   * The whole lines appended to the Trace since the last look (all of it the
   * first time, or after a compaction made it shorter; seen ids are skipped).
   */
  private newLines(dir: string): string {
    const file = traceFile(dir)
    let fd: number | undefined
    try {
      fd = openSync(file, 'r')
      const size = fstatSync(fd).size
      let from = this.offsets.get(dir) ?? 0
      if (size < from) from = 0
      if (size === from) return ''
      const length = Math.min(size - from, MAX_TRACE_BYTES * 4)
      const bytes = Buffer.alloc(length)
      const got = readSync(fd, bytes, 0, length, size - length)
      const end = bytes.lastIndexOf(0x0a, got - 1) + 1
      // A line still being written is read whole next time.
      this.offsets.set(dir, size - length + end)
      return bytes.toString('utf8', 0, end)
    } catch {
      return ''
    } finally {
      if (fd !== undefined) closeSync(fd)
    }
  }
}

/** One inert line for a note: `! build notify review.ready: the diff is ready` (the Run wrote all of it into its Trace). */
export function attentionText(note: AttentionNote): string {
  return printableLine(`${note.run} ${note.attention} ${note.kind}${note.summary ? `: ${note.summary}` : ''}`, 1000)
}
