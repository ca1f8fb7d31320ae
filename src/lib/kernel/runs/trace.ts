/**
 * A Run's Trace: an append-only JSONL journal of events, bounded at
 * MAX_TRACE_EVENTS events and MAX_TRACE_BYTES bytes. When either bound is
 * crossed the oldest half is dropped under the Run's lock and replaced by one
 * `runtime.trace_compacted` marker saying how many events went.
 */
import {randomUuid} from '../../base/platform/builtins.js'
import {join} from 'node:path'
import {usageError} from '../../base/platform/errors.js'
import {withLockSync} from '../../base/platform/file-lock.js'
import {runFile, updateRunMeta} from './store.js'
import {existsSync} from 'node:fs'
import {appendStateFile, writeStateFile} from '../../base/platform/private-files.js'
import {fileKey} from '../../base/platform/file-key.js'
import {
  appendJsonLine,
  fileSize,
  parseJsonLines,
  readBoundedText,
  readFileEnd,
  readJsonLines,
  writeFileAtomic,
} from '../../base/platform/state-files.js'

export const MAX_TRACE_EVENTS = 2048
export const MAX_TRACE_BYTES = 4 * 1024 * 1024
/** Largest single event we accept (summary + data), so one event can never blow the bound. */
export const MAX_EVENT_BYTES = 64 * 1024
export const TRACE_KIND_PATTERN = /^[a-z][a-z0-9_-]*(\.[a-z0-9_-]+)*$/
export const ATTENTION_LEVELS = ['notify', 'followup', 'steer'] as const
export type Attention = (typeof ATTENTION_LEVELS)[number]
/** Attention levels that wake the owner's `wait` (`notify` only shows in live views). */
export const WAKING_ATTENTION: ReadonlySet<string> = new Set<Attention>(['followup', 'steer'])

/**
 * The attention an event carries: none for `command.done` and every
 * `runtime.*` kind, whoever wrote them (a Run's end and the kernel's own
 * records are never a request to the coordinator, even with the field set).
 * Every reader that projects attention from a Trace asks this.
 */
export function eventAttention(event: {kind?: unknown; attention?: unknown}): Attention | undefined {
  if (typeof event.kind !== 'string' || event.kind === 'command.done' || event.kind.startsWith('runtime.')) return
  return (ATTENTION_LEVELS as readonly unknown[]).includes(event.attention) ? (event.attention as Attention) : undefined
}

export interface TraceEvent {
  id: string
  ts: string
  kind: string
  summary?: string
  data?: unknown
  level?: string
  attention?: Attention
  run_instance_id?: string
}

export function traceFile(dir: string): string {
  return runFile(dir, 'trace')
}

export type NewTraceEvent = Omit<TraceEvent, 'id' | 'ts'>

/**
 * Whether the Trace in `dir` may hold a waking attention event. A Run
 * launched by this kernel says so in run.json (`attention_flag: true`): every
 * waking event appended to its Trace first creates `attention.flag` beside
 * it, so a Run without the flag asked for nothing and its Trace need not be
 * read (a batch scans up to 256 of them). A Run from an earlier version has
 * no such promise: its Trace is always read.
 *
 * A finished Run says more: its end recorded whether the flag was there
 * (`attention_raised`, written under the Run's lock with the result), and a
 * waking event emitted after the end sets it true, under the same lock,
 * before the event is appended. So a wait delivering a backlog of finished
 * Runs looks for no flag at all.
 */
export function attentionFlagged(dir: string, meta: {attention_flag?: unknown; attention_raised?: unknown}): boolean {
  if (meta.attention_flag !== true) return true
  if (typeof meta.attention_raised === 'boolean') return meta.attention_raised
  return existsSync(runFile(dir, 'attention'))
}

/** Raise attention.flag in `dir`; a Run that has ended also records it in run.json (see attentionFlagged). */
function raiseAttentionFlag(dir: string): void {
  appendStateFile(runFile(dir, 'attention'), '')
  updateRunMeta(dir, (meta) => (meta.attention_raised === false ? {...meta, attention_raised: true} : undefined))
}

/** Append the kernel's own event to the Trace of the Run `meta` is, best effort: what it records goes on without it. */
export function traceQuietly(
  dir: string,
  meta: {run_instance_id: string},
  event: Omit<NewTraceEvent, 'run_instance_id'>,
): void {
  try {
    appendTraceEvent(dir, {...event, run_instance_id: meta.run_instance_id})
  } catch {}
}

/** Validate, append one event and compact when the journal outgrew its bounds. Returns the stored event. */
export function appendTraceEvent(dir: string, input: NewTraceEvent): TraceEvent {
  if (!TRACE_KIND_PATTERN.test(input.kind) || input.kind.length > 128) {
    throw usageError(
      `event kind ${JSON.stringify(input.kind)} is not valid`,
      'use lowercase dotted words, e.g. build.step or review.done',
    )
  }
  const event: TraceEvent = {id: randomUuid(), ts: new Date().toISOString(), ...input}
  const line = JSON.stringify(event)
  if (Buffer.byteLength(line) > MAX_EVENT_BYTES) {
    throw usageError(
      `event is ${Buffer.byteLength(line)} bytes, over the ${MAX_EVENT_BYTES}-byte limit`,
      'put large payloads in a file and emit its path',
    )
  }
  const file = traceFile(dir)
  // Raised before the event is in the Trace: a wait that finds no flag has no waking event to miss (see attentionFlagged).
  const attention = eventAttention(input)
  if (attention !== undefined && WAKING_ATTENTION.has(attention)) raiseAttentionFlag(dir)
  // Appends and compaction share one lock so a compaction never loses an event appended meanwhile.
  withLockSync(traceLock(dir), () => {
    const before = traceStat(file)
    appendJsonLine(file, event)
    const after = traceStat(file)
    if (after && (after.size > MAX_TRACE_BYTES || countEvents(dir, file, before, after) > MAX_TRACE_EVENTS))
      compactTraceLocked(dir)
  })
  return event
}

/**
 * The event count is needed exactly, but counting lines on every append would
 * make each emit cost the whole journal (4 MiB at the byte bound). Below
 * MAX_TRACE_EVENTS * MIN_EVENT_BYTES the journal cannot hold too many events
 * (every event is longer than that), so nothing is counted. Above it, the
 * count lives in `.trace.count` beside the journal: `{key, events}`, valid
 * while the journal keeps the inode, size, mtime and ctime it had when the count was
 * written; an append that finds it valid adds one. Anything else (missing,
 * damaged, a journal changed behind the kernel's back) is a recount, once.
 */
const MIN_EVENT_BYTES = 60

type TraceStat = {key: string; size: number}

/** The journal's file key (platform/file-key.ts) as the count's key, and its size. */
function traceStat(file: string): TraceStat | undefined {
  const key = fileKey(file)
  return key && {key: key.join(':'), size: key[1]}
}

function countFile(dir: string): string {
  return join(dir, '.trace.count')
}

/** Events in the journal after an append (`before`/`after`: its stat around the append). Caller holds the trace lock. */
function countEvents(dir: string, file: string, before: TraceStat | undefined, after: TraceStat): number {
  if (after.size < MAX_TRACE_EVENTS * MIN_EVENT_BYTES) return 0
  let kept: {key?: unknown; events?: unknown} | undefined
  try {
    kept = JSON.parse(readBoundedText(countFile(dir), 4096) ?? '')
  } catch {}
  const events =
    before && kept?.key === before.key && Number.isInteger(kept.events)
      ? (kept.events as number) + 1
      : readJsonLines(file, MAX_TRACE_BYTES * 2).records.length
  keepCount(dir, after, events)
  return events
}

/** Remember how many events the journal with stat `stat` holds (a cache: written in place, never trusted beyond its key). */
function keepCount(dir: string, stat: TraceStat | undefined, events: number): void {
  try {
    if (stat) writeStateFile(countFile(dir), JSON.stringify({key: stat.key, events}))
  } catch {}
}

function traceLock(dir: string): string {
  return join(dir, '.trace.lock')
}

/** Drop the oldest events until the journal is at half its bounds, leaving a marker. Caller holds the trace lock. */
function compactTraceLocked(dir: string): void {
  const file = traceFile(dir)
  {
    const {records} = readJsonLines<TraceEvent>(file, MAX_TRACE_BYTES * 4)
    if (records.length <= MAX_TRACE_EVENTS && fileSize(file) <= MAX_TRACE_BYTES) {
      // A count that said otherwise was wrong (a journal edited by hand): keep the true one.
      keepCount(dir, traceStat(file), records.length)
      return
    }
    let keep = records.slice(-Math.floor(MAX_TRACE_EVENTS / 2))
    let bytes = keep.reduce((sum, e) => sum + JSON.stringify(e).length + 1, 0)
    while (bytes > MAX_TRACE_BYTES / 2 && keep.length > 1) {
      bytes -= JSON.stringify(keep[0]).length + 1
      keep = keep.slice(1)
    }
    const dropped = records.length - keep.length
    const marker: TraceEvent = {
      id: randomUuid(),
      ts: new Date().toISOString(),
      kind: 'runtime.trace_compacted',
      summary: `${dropped} older events dropped`,
      data: {dropped},
    }
    writeFileAtomic(file, [marker, ...keep].map((e) => JSON.stringify(e)).join('\n') + '\n')
    keepCount(dir, traceStat(file), keep.length + 1)
  }
}

/**
 * The last `count` events of a Run's Trace, read from its end a window at a
 * time, never whole: a batch reads the Traces of 64 rows, and one Trace may
 * hold 4 MiB. A Trace that fits the first window costs no stat (readFileEnd).
 */
export function readTraceTail(dir: string, count: number): TraceEvent[] {
  for (let window = TAIL_WINDOW_BYTES; ; window *= 4) {
    // Only the end is read, so a Trace grown past its bound (a Run can append to its own) still shows its tail:
    // the windows stop growing at MAX_TAIL_WINDOW_BYTES, with what they found.
    const read = readFileEnd(traceFile(dir), Math.min(window, MAX_TAIL_WINDOW_BYTES))
    if (read === undefined) return []
    let text = read.bytes.toString('utf8', 0, read.length)
    // A window that starts inside the file starts inside a line: that part of a line is no event.
    if (read.start > 0) text = text.slice(text.indexOf('\n') + 1)
    const records = parseJsonLines<TraceEvent>(text).records.filter(isTraceEvent)
    if (records.length >= count || read.start === 0 || window >= MAX_TAIL_WINDOW_BYTES) return records.slice(-count)
  }
}

/** A line with an event's own fields (its time, kind and summary as text): a Run may append anything to its Trace. */
function isTraceEvent(record: TraceEvent): boolean {
  return (
    typeof record.ts === 'string' &&
    typeof record.kind === 'string' &&
    (record.summary === undefined || typeof record.summary === 'string')
  )
}

/** The most of a Trace's end readTraceTail reads. */
const MAX_TAIL_WINDOW_BYTES = MAX_TRACE_BYTES * 4

/** readTraceTail's first window: most Traces fit it. */
const TAIL_WINDOW_BYTES = 64 * 1024
