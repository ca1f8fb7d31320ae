/**
 * The completion batch document (SPEC: Completion batches). Facts about each
 * row are read from disk once (`readRowFacts`); `buildBatchDocument` and
 * `batchExitCode` are pure, so the plain card, the JSON output and the Ink
 * card all show the same document.
 */
import {randomUuid} from '../../base/platform/builtins.js'
import {outputTail} from '../../kernel/runs/logs.js'
import {MIRRORED_ARTIFACTS, readRunResult} from '../../kernel/runs/store.js'
import {readTraceTail} from '../../kernel/runs/trace.js'
import {FAILING_STATUSES, runGeneration, type ArtifactRecord} from '../../base/records/run.js'
import {pendingWhy} from '../../kernel/executors/index.js'
import {readUsage} from '../../kernel/runs/usage.js'
import {readCollected, type CollectedRun} from './collected.js'
import {memberKey, type BatchMeta, type RunEntry, type Selection} from './select.js'
import {shownMembers} from './ended-on-request.js'

export const BATCH_SCHEMA = 'actors-batch-v1'
export const MAX_ROWS = 64
export const MAX_OUTPUT_CHARS = 4000
export const MAX_ROW_ARTIFACTS = MIRRORED_ARTIFACTS
export const MAX_PENDING_LISTED = 64
export const MAX_SUMMARY_CHARS = 500
/** A batch document, as printed by `wait --json`, is at most this large (SPEC: Completion batches). */
export const MAX_BATCH_BYTES = 1024 * 1024
/** Room kept for what a printer adds to the document (`run --wait` adds `launched`). */
const PRINTER_HEADROOM_BYTES = 8 * 1024

/** A summary cut to MAX_SUMMARY_CHARS (rows and attention items alike). */
export function boundSummary(summary: string): string {
  return summary.length > MAX_SUMMARY_CHARS ? summary.slice(0, MAX_SUMMARY_CHARS - 1) + '…' : summary
}

/** Tokens a Run reported with `actors emit usage` (its totals). */
export interface RowUsage {
  tokens: number
  prompt_tokens: number
  completion_tokens: number
}

/** A member's row: where it stands, and the facts of its end (RowFacts). */
export interface BatchRow extends RowFacts {
  run: string
  run_instance_id: string
  /** Which launch of the Run id (run.json's `generation`; absent means 1); a row above 1 is a resumed (or rerun) generation. */
  generation: number
  /** An earlier generation delivered after the Run moved on (its files are in generations/<n>/). */
  archived?: boolean
  status: string
  depth: number
  parent: string | null
  ended_at: string | null
  state_dir: string
}

export interface AttentionItem {
  run: string
  run_instance_id: string
  event_id: string
  kind: string
  summary: string | null
  attention: string
  ts: string
}

export interface BatchDocument {
  schema: typeof BATCH_SCHEMA
  batch_id: string
  owner: string
  created_at: string
  /** Terminal times of the members: the first and the last. */
  window: {from: string | null; to: string | null}
  /** Members of the batch (rows + overflow). */
  members: number
  counts: Record<string, number>
  rows: BatchRow[]
  /** Members past MAX_ROWS (or the byte bound) not printed as rows (counted; their ids are listed in overflow_runs). */
  overflow: number
  overflow_runs: string[]
  /**
   * Members ended by an explicit control stop/kill from outside their tree, left out of the rows
   * (wait/ended-on-request.ts). Always set on a new batch; absent from one claimed by an earlier release.
   */
  stopped?: number
  stopped_runs?: Array<{run: string; status: string}>
  /** Terminal Runs left for the next batch (a batch holds at most 256 members). */
  deferred: number
  /** The live Runs waited for; `why` says what holds one back (a lock, a pause, a pending job, a parent's cap). */
  pending: Array<{run: string; run_instance_id: string; status: string; why?: string}>
  pending_count: number
  unknown: string[]
  already_reported: string[]
  attention: AttentionItem[]
  timed_out: boolean
  redelivered: boolean
  hint: string
}

/** What a row needs from disk beyond run.json. */
export interface RowFacts {
  summary: string
  output: string
  /** The first ones (at least MAX_ROW_ARTIFACTS of them when there are that many). */
  artifacts: ArtifactRecord[]
  artifacts_total: number
  /** What the Run reported, or null when it reported none. */
  usage: RowUsage | null
  /** Runs this Run's own waits collected (reported to it, so not rows here): at most 10 (wait/collected.ts). */
  collected: CollectedRun[]
  collected_total: number
  exit_code: number | null
  duration_ms: number | null
  /** The Run's own usage took its tree past --budget-tokens (result.json `budget_exceeded`). */
  budget_exceeded: boolean
}

/** How a Run ended, as its row shows it. */
type EndFacts = Pick<RowFacts, 'artifacts' | 'artifacts_total' | 'exit_code' | 'duration_ms' | 'budget_exceeded'> & {
  reason: string | null
}

const numberOrNull = (value: unknown): number | null => (typeof value === 'number' ? value : null)

/** From run.json when its end mirrored enough of result.json there (store.ts writeResultLocked), else from result.json. */
function endFacts(entry: RunEntry): EndFacts {
  const {meta} = entry
  const head = meta.artifacts_head
  // A hand-edited count that is no count is no mirror: result.json says.
  const total =
    typeof meta.artifacts_total === 'number' && Number.isSafeInteger(meta.artifacts_total) && meta.artifacts_total >= 0
      ? meta.artifacts_total
      : undefined
  if (Array.isArray(head) && total !== undefined && head.length >= Math.min(total, MAX_ROW_ARTIFACTS)) {
    return {
      reason: typeof meta.reason === 'string' ? meta.reason : null,
      artifacts: head,
      artifacts_total: total,
      exit_code: numberOrNull(meta.exit_code),
      duration_ms: numberOrNull(meta.duration_ms),
      budget_exceeded: meta.budget_exceeded === true,
    }
  }
  let result
  try {
    result = readRunResult(entry.dir, meta)
  } catch {
    result = undefined
  }
  const artifacts = result?.artifacts ?? []
  return {
    reason: result?.reason ?? null,
    artifacts,
    artifacts_total: artifacts.length,
    exit_code: result?.exit_code ?? numberOrNull(meta.exit_code),
    duration_ms: result?.duration_ms ?? numberOrNull(meta.duration_ms),
    budget_exceeded: result?.budget_exceeded === true,
  }
}

/** Read the row facts of one terminal Run: result, last summary, output tail. Damaged files degrade to empty facts. */
export function readRowFacts(entry: RunEntry): RowFacts {
  const end = endFacts(entry)
  let summary = ''
  try {
    const events = readTraceTail(entry.dir, 64)
    for (let i = events.length - 1; i >= 0; i--) {
      const event = events[i]
      // Kernel events (runtime.*, the lock.* of Resource locks) and usage reports say nothing about the work.
      if (
        event.summary &&
        !event.kind.startsWith('runtime.') &&
        !event.kind.startsWith('lock.') &&
        event.kind !== 'usage'
      ) {
        summary = event.summary
        break
      }
    }
  } catch {}
  if (!summary) {
    const {reason, exit_code: exitCode} = end
    summary = [
      entry.meta.status,
      exitCode !== null ? `exit ${exitCode}` : '',
      reason && reason !== 'exit_code' ? reason : '',
    ]
      .filter(Boolean)
      .join(', ')
  }
  let output = ''
  try {
    output = outputTail(entry.dir, MAX_OUTPUT_CHARS)
  } catch {}
  let usage: RowUsage | null = null
  try {
    const totals = readUsage(entry.dir)
    if (totals)
      usage = {tokens: totals.tokens, prompt_tokens: totals.prompt_tokens, completion_tokens: totals.completion_tokens}
  } catch {}
  return {
    summary: boundSummary(summary),
    output,
    artifacts: end.artifacts,
    artifacts_total: end.artifacts_total,
    usage,
    ...readCollected(entry.dir, entry.meta.run_instance_id),
    exit_code: end.exit_code,
    duration_ms: end.duration_ms,
    budget_exceeded: end.budget_exceeded,
  }
}

export interface BatchInput {
  owner: string
  selection: Pick<Selection, 'members' | 'deferred' | 'pending' | 'unknown' | 'already_reported'>
  /** Facts for the first MAX_ROWS members, by memberKey(run, instance). */
  facts: Map<string, RowFacts>
  attention: AttentionItem[]
  timedOut: boolean
  /** The Runs the wait named: their rows are shown however they ended. */
  named?: readonly string[]
  now?: Date
  batchId?: string
}

/** Build the batch document from a selection and its row facts (pure). */
export function buildBatchDocument(input: BatchInput): BatchDocument {
  const {selection} = input
  const counts: Record<string, number> = {}
  for (const member of selection.members) counts[member.meta.status] = (counts[member.meta.status] ?? 0) + 1
  const ends = selection.members
    .map((m) => m.meta.ended_at)
    .filter((t): t is string => typeof t === 'string')
    .sort()
  const shown = shownMembers(selection.members, input.named)
  const kept = new Set(shown)
  const stopped = selection.members.filter((m) => !kept.has(m))
  const rows = shown.slice(0, MAX_ROWS).map((entry): BatchRow => {
    const facts = input.facts.get(memberKey(entry.meta.run, entry.meta.run_instance_id)) ?? {
      summary: entry.meta.status,
      output: '',
      artifacts: [],
      artifacts_total: 0,
      usage: null,
      collected: [],
      collected_total: 0,
      exit_code: null,
      duration_ms: null,
      budget_exceeded: false,
    }
    return {
      run: entry.meta.run,
      run_instance_id: entry.meta.run_instance_id,
      generation: runGeneration(entry.meta),
      ...(entry.archived ? {archived: true} : {}),
      status: entry.meta.status,
      depth: entry.meta.depth,
      parent: entry.meta.parent?.run ?? null,
      ...facts,
      // Bounded here whatever facts were given (result.json lists every artifact); the spread keeps each field's place.
      output: facts.output.length > MAX_OUTPUT_CHARS ? facts.output.slice(-MAX_OUTPUT_CHARS) : facts.output,
      artifacts: facts.artifacts.slice(0, MAX_ROW_ARTIFACTS),
      ended_at: typeof entry.meta.ended_at === 'string' ? entry.meta.ended_at : null,
      state_dir: entry.dir,
    }
  })
  const overflowRuns = shown.slice(MAX_ROWS).map((m) => m.meta.run)
  const first = rows[0]?.run
  return boundBatchBytes({
    schema: BATCH_SCHEMA,
    batch_id: input.batchId ?? randomUuid(),
    owner: input.owner,
    created_at: (input.now ?? new Date()).toISOString(),
    window: {from: ends[0] ?? null, to: ends[ends.length - 1] ?? null},
    members: selection.members.length,
    counts,
    rows,
    overflow: overflowRuns.length,
    overflow_runs: overflowRuns,
    stopped: stopped.length,
    stopped_runs: stopped.map((m) => ({run: m.meta.run, status: m.meta.status})),
    deferred: selection.deferred,
    pending: selection.pending.slice(0, MAX_PENDING_LISTED).map((e) => pendingRow(e.meta)),
    pending_count: selection.pending.length,
    unknown: selection.unknown,
    already_reported: selection.already_reported,
    attention: input.attention,
    timed_out: input.timedOut,
    redelivered: false,
    hint: first
      ? `actors inspect ${first} (one Run in detail), actors inspect --tree (the forest)`
      : 'actors inspect --tree (the forest)',
  })
}

/** Bytes of the document as `wait --json` prints it. */
export function batchBytes(doc: BatchDocument): number {
  return Buffer.byteLength(JSON.stringify(doc, null, 2))
}

/**
 * Keep the document within MAX_BATCH_BYTES: shorten every row's output tail
 * (halving its length until it fits, down to nothing), then move rows from
 * the end into `overflow`. Escaped control characters and multi-byte text
 * are why a 4000-character tail can take far more than 4000 bytes.
 */
function boundBatchBytes(doc: BatchDocument): BatchDocument {
  const limit = MAX_BATCH_BYTES - PRINTER_HEADROOM_BYTES
  if (batchBytes(doc) <= limit) return doc
  const full = doc.rows.map((row) => row.output)
  for (let cap = MAX_OUTPUT_CHARS >> 1; ; cap >>= 1) {
    doc.rows.forEach((row, i) => {
      row.output = cap === 0 ? '' : full[i].slice(-cap)
    })
    if (batchBytes(doc) <= limit) return doc
    if (cap === 0) break
  }
  // The most rows that fit (binary search: each probe serialises the document once).
  const rows = doc.rows
  const fits = (n: number) =>
    batchBytes({
      ...doc,
      rows: rows.slice(0, n),
      overflow_runs: [...rows.slice(n).map((r) => r.run), ...doc.overflow_runs],
    }) <= limit
  let low = 0
  let high = rows.length - 1
  while (low < high) {
    const mid = (low + high + 1) >> 1
    if (fits(mid)) low = mid
    else high = mid - 1
  }
  doc.overflow_runs = [...rows.slice(low).map((r) => r.run), ...doc.overflow_runs]
  doc.overflow += rows.length - low
  doc.rows = rows.slice(0, low)
  return doc
}

/**
 * The exit code of `wait` for a delivered document: 1 when any member (or
 * explicitly waited silent Run) failed, was killed or exited, except a
 * member left out as ended on request; 124 when the
 * wait timed out with nothing ready; 4 when every requested id was unknown.
 */
export function batchExitCode(doc: BatchDocument, context: {requested: number; silentStatuses?: string[]}): number {
  const delivered = doc.members > 0 || doc.attention.length > 0
  if (!delivered && context.requested > 0 && doc.unknown.length === context.requested) return 4
  // Rowless members alone are no answer to the wait: a timeout with only those is still a timeout.
  const answered = doc.members > (doc.stopped ?? 0) || doc.attention.length > 0
  // A Run someone outside it killed is that one's outcome, not a failure this wait reports (it has no row).
  const leftOut: Record<string, number> = {}
  for (const s of doc.stopped_runs ?? []) leftOut[s.status] = (leftOut[s.status] ?? 0) + 1
  const failing = Object.entries(doc.counts).some(([s, n]) => FAILING_STATUSES.has(s) && n > (leftOut[s] ?? 0))
  if (failing) return 1
  if ((context.silentStatuses ?? []).some((status) => FAILING_STATUSES.has(status))) return 1
  if (!answered && doc.timed_out) return 124
  return 0
}

/** How many unknown ids the message names: a request of thousands must not make a message of as many. */
const UNKNOWN_NAMED = 20

/** The message and fix of a wait whose every requested Run was unknown (exit 4); the rest are counted, not named. */
export function unknownRunsProblem(doc: BatchDocument): {message: string; fix: string} {
  const named = doc.unknown.slice(0, UNKNOWN_NAMED).join(', ')
  const more = doc.unknown.length - UNKNOWN_NAMED
  const ids = more > 0 ? `${named} (and ${more} more)` : named
  return {message: `no Run ${ids} of owner ${doc.owner}`, fix: 'list Runs with `actors inspect`'}
}

/** A pending Run as the batch lists it, with what holds it back when something does (executors pendingWhy). */
function pendingRow(meta: BatchMeta): BatchDocument['pending'][number] {
  const executor = (meta.executor ?? {}) as {kind?: unknown; job_id?: unknown}
  const why = pendingWhy({
    status: meta.status,
    waiting_for: Array.isArray(meta.waiting_for) ? (meta.waiting_for as string[]) : undefined,
    executor: typeof executor.kind === 'string' ? executor.kind : undefined,
    job_id: typeof executor.job_id === 'string' ? executor.job_id : null,
    parent: meta.parent?.run ?? null,
  })
  return {run: meta.run, run_instance_id: meta.run_instance_id, status: meta.status, ...(why ? {why} : {})}
}
