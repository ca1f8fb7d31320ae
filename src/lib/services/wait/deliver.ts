/**
 * `actors wait` as a service: sleep on the doorbell until the requested Runs
 * are ready, claim a batch in the owner's delivery journal (phase `pending`,
 * with this process as claimer), print it, and only then mark its members
 * reported. A wait that dies between claiming and printing leaves its batch
 * pending under a dead claimer; the next wait of the owner delivers that same
 * batch (same batch_id) before choosing anything new.
 */
import {followUpEndedRuns} from '../tree/after-run.js'
import {ensureHome} from '../../base/platform/home.js'
import {isTerminal, type RunMeta} from '../../base/records/run.js'
import {isSameProcess, readProcessIdentity, type ProcessIdentity} from '../../base/platform/process-identity.js'
import {executorOf} from '../../kernel/executors/index.js'
import {findAttention} from './attention.js'
import {batchExitCode, buildBatchDocument, MAX_ROWS, readRowFacts, type BatchDocument, type RowFacts} from './batch.js'
import {recordCollected} from './collected.js'
import {rebuildOrphan} from './orphan.js'
import {Doorbell} from '../../base/bell/doorbell.js'
import {compareQueueKeys, dropIndexMarkers, markerTag} from '../../kernel/history/index-markers.js'
import {markQueueChanged} from '../../kernel/history/index-queue.js'
import {renewEmptiedQueues} from '../../kernel/history/queue-renew.js'
import {
  forgetVanished,
  markDelivered,
  migrateLegacyReported,
  withJournal,
  type DeliveryJournal,
  type PendingBatch,
} from './journal.js'
import {
  MAX_MEMBERS,
  memberKey,
  selectBatch,
  treeOrderKey,
  type BatchMeta,
  type RunEntry,
  type Selection,
} from './select.js'
import {WaitSnapshot} from './snapshot.js'
import {holdUnprovenEnds, unprovenPollMs} from './proven-ends.js'
import {testHookPause} from '../../base/platform/test-hooks.js'
import {DEFAULT_SETTLE_MS, SettleWindow} from './settle.js'
import {shownMembers} from './ended-on-request.js'

export interface WaitRequest {
  home: string
  owner: string
  /** Explicit Run ids (already resolved); none = every unreported Run of the owner in scope. */
  ids?: string[]
  /** Return once at least one is ready, not all. */
  any: boolean
  timeoutMs?: number
  /** The Run this wait runs inside: only its descendants are waited for by default. */
  scope?: {run: string; run_instance_id: string}
  /** Stop waiting (rejects with the signal's reason) before a batch is claimed; used by `actors mcp` when a call is cancelled. */
  signal?: AbortSignal
  /** The Run this wait runs inside, credited with what it collects (its batch row shows them; wait/collected.ts). */
  collector?: {run: string; run_instance_id: string}
  /** `run --wait`: only the end makes the batch ready; attention raised on the way comes with it, never alone. */
  untilEnd?: boolean
  /** The settle window (wait/settle.ts; default DEFAULT_SETTLE_MS, 0 claims at the first ready look). */
  settleMs?: number
}

/**
 * Thrown by a BatchPrinter that knows its batch never reached the reader (an
 * MCP call cancelled after the batch was chosen): the claim is withdrawn, so
 * the members stay unreported for the next wait of the same process.
 */
export class BatchNotShown extends Error {}

export interface WaitOutcome {
  document: BatchDocument
  exitCode: number
}

/** Prints a batch (stdout); resolves once written. Members are marked reported only after it resolves. */
export type BatchPrinter = (document: BatchDocument) => Promise<void>

/** Queued Runs read beyond a batch and the claimed ones: a few stale entries or ineligible Runs need not cost a second read. */
const WINDOW_SLACK = 16

type Attempt =
  | {ready: false; pollMs?: number; settling?: boolean}
  | {
      ready: true
      document: BatchDocument
      pending?: PendingBatch
      silentStatuses: string[]
      metas?: Map<string, BatchMeta>
    }

let self: ProcessIdentity | undefined
function selfIdentity(): ProcessIdentity {
  self ??= readProcessIdentity(process.pid) ?? {pid: process.pid, start: 'unknown'}
  return self
}

/** One look at the state, under the owner's journal lock: claim a ready batch, or say "not yet". */
function attempt(request: WaitRequest, timedOut: boolean, settle: SettleWindow): Attempt {
  return withJournal<Attempt>(request.home, request.owner, (journal) => {
    const migrated = migrateLegacyReported(request.home, journal)
    // The first window: a full batch, what other waits have claimed, and a little slack (see settled()).
    const claimedCount = journal.pending.reduce((n, batch) => n + batch.members.length, 0)
    const snapshot = new WaitSnapshot(request.home, request, MAX_MEMBERS + claimedCount + WINDOW_SLACK)
    const {orphan, dropped} = takeOrphan(request, journal, snapshot)
    if (orphan) {
      orphan.claimer = selfIdentity()
      orphan.claimed_at = new Date().toISOString()
      return {
        value: {ready: true, document: {...orphan.document, redelivered: true}, pending: orphan, silentStatuses: []},
        write: true,
      }
    }
    const claimed = new Set<string>()
    const claimedEvents = new Set<string>()
    for (const batch of journal.pending) {
      for (const m of batch.members) claimed.add(memberKey(m.run, m.run_instance_id))
      for (const a of batch.attention) claimedEvents.add(a.event_id)
    }
    let selection = settledSelection(request, snapshot, claimed)
    // An end is the Run's word until nothing of it lives: one that still runs is read again shortly.
    const unproven = holdUnprovenEnds(snapshot.runs, [...selection.members, ...selection.silent])
    if (unproven > 0) selection = settledSelection(request, snapshot, claimed)
    const pruned = forgetVanished(journal, (run) => snapshot.isIndexed(run)) || migrated || dropped
    // Attention comes from live Runs and this batch's members; a finished Run's requests come with its own batch.
    // An earlier generation is finished: its result row is what is owed, not its old attention requests.
    const members = new Set(selection.members)
    const attention = findAttention(
      selection.candidates.filter((c) => !c.archived && (members.has(c) || !isTerminal(c.meta.status))),
      journal,
      claimedEvents,
    )
    const look = readiness(request, selection, attention.length > 0, timedOut, settle)
    if ('sleep' in look) {
      snapshot.saveQueue()
      const recheck = unprovenPollMs(unproven)
      if (recheck !== undefined) look.sleep.pollMs = Math.min(look.sleep.pollMs ?? recheck, recheck)
      return {value: look.sleep, write: pruned}
    }
    const {ready} = look
    const document = buildBatchDocument({
      owner: request.owner,
      selection,
      facts: rowFacts(selection, request.ids),
      attention,
      named: request.ids,
      timedOut: timedOut && !ready,
    })
    const silentStatuses = selection.silent.map((s) => s.meta.status)
    if (document.members === 0 && attention.length === 0) {
      snapshot.saveQueue()
      return {value: {ready: true, document, silentStatuses}, write: pruned}
    }
    const pending: PendingBatch = {
      batch_id: document.batch_id,
      phase: 'pending',
      claimed_at: new Date().toISOString(),
      claimer: selfIdentity(),
      members: selection.members.map((m) => ({
        run: m.meta.run,
        run_instance_id: m.meta.run_instance_id,
        ...(m.archived ? {archived: true} : {}),
      })),
      attention: attention.map((a) => ({run: a.run, run_instance_id: a.run_instance_id, event_id: a.event_id})),
      document,
    }
    journal.pending.push(pending)
    // The claimed members leave the owner's queue once delivered; its next wait need not read them again.
    snapshot.saveQueue(new Set(pending.members.map((m) => `${m.run}@${m.run_instance_id}`)))
    const metas = new Map(selection.members.map((m) => [`${m.meta.run}@${m.meta.run_instance_id}`, m.meta]))
    return {value: {ready: true, document, pending, silentStatuses, metas}, write: true}
  })
}

/**
 * Select the batch, reading the queue on until the selection is settled:
 * full, and ending at a tree every unread Run sorts after. Runs the index
 * lists but this look did not read are still owed: counted as deferred.
 */
function settledSelection(request: WaitRequest, snapshot: WaitSnapshot, claimed: Set<string>): Selection {
  const {runs, archived, reported} = snapshot
  const select = () =>
    selectBatch({runs, archived, owner: request.owner, reported, claimed, scope: request.scope, ids: request.ids})
  let selection = select()
  for (let window = 4 * MAX_MEMBERS; !snapshot.complete && !settled(selection, snapshot); window *= 4) {
    snapshot.more(window)
    selection = select()
  }
  return {...selection, deferred: selection.deferred + snapshot.unread}
}

/**
 * Whether this look claims a batch (`ready` false: only because the wait
 * timed out), or how it sleeps until the next: a settle hold, or the poll a
 * live remote Run's executor asks for (a remote Run rings no doorbell here).
 */
function readiness(
  request: WaitRequest,
  selection: Selection,
  attention: boolean,
  timedOut: boolean,
  settle: SettleWindow,
): {ready: boolean} | {sleep: Extract<Attempt, {ready: false}>} {
  const onlyUnknown =
    request.ids !== undefined && request.ids.length > 0 && selection.unknown.length === request.ids.length
  const ready =
    onlyUnknown ||
    (attention && !request.untilEnd) ||
    selection.waited === 0 ||
    (request.any ? anyReady(request, selection) : selection.all_terminal)
  // Ready through ends alone while waited-for Runs are still live: hold the claim until no new end came for a window.
  const holdUntil =
    ready && !timedOut && !onlyUnknown && !attention && selection.pending.length > 0
      ? holdForSettle(selection, settle)
      : undefined
  if (holdUntil !== undefined) {
    const poll = shortestPoll(selection.pending.map((c) => c.meta))
    const untilClaim = Math.max(1, holdUntil - Date.now())
    return {sleep: {ready: false, pollMs: poll === undefined ? untilClaim : Math.min(poll, untilClaim), settling: true}}
  }
  if (!ready && !timedOut) {
    const live = selection.candidates.filter((c) => !isTerminal(c.meta.status)).map((c) => c.meta)
    return {sleep: {ready: false, pollMs: shortestPoll(live)}}
  }
  return {ready}
}

/**
 * `--any`: a member with a row is ready. Runs ended on request (rowless,
 * wait/ended-on-request.ts) wake nobody while other waited-for Runs are live:
 * they come with the next batch, or alone once nothing is left to wait for.
 */
function anyReady(request: WaitRequest, selection: Selection): boolean {
  if (selection.members.length === 0) return false
  return selection.pending.length === 0 || shownMembers(selection.members, request.ids).length > 0
}

/**
 * When the settle window says to claim these ready members (undefined: now).
 * A full batch is claimed at once: waiting could not add to it.
 */
function holdForSettle(selection: Selection, settle: SettleWindow): number | undefined {
  if (selection.members.length >= MAX_MEMBERS) return undefined
  const now = Date.now()
  const at = settle.claimAt(
    selection.members.map((m) => memberKey(m.meta.run, m.meta.run_instance_id)),
    now,
  )
  return at > now ? at : undefined
}

/** The row facts (result, last summary, output tail, artifacts, usage) of each member that gets a row. */
function rowFacts(selection: Selection, named: readonly string[] | undefined): Map<string, RowFacts> {
  const facts = new Map<string, RowFacts>()
  for (const member of shownMembers(selection.members, named).slice(0, MAX_ROWS))
    facts.set(memberKey(member.meta.run, member.meta.run_instance_id), readRowFacts(member))
  return facts
}

/** A selection that no unread queued Run could change: a full batch whose last tree's top sorts before every unread Run. */
function settled(selection: Selection, snapshot: WaitSnapshot): boolean {
  const frontier = snapshot.frontier
  return (
    selection.members.length >= MAX_MEMBERS &&
    selection.boundary !== undefined &&
    frontier !== undefined &&
    compareQueueKeys(treeOrderKey(selection.boundary), frontier) <= 0
  )
}

/**
 * How long a claim holds while its claimer lives: a wait prints its batch and
 * marks it delivered within moments of claiming it, so a claim older than
 * this (or dated ahead of now, or undated) is no wait's at work. The journal
 * is the user's to write, and a batch planted under a live process that is
 * no wait (pid 1) held its members from every wait of the owner for good.
 */
const CLAIM_HOLDS_MS = 120_000
/** Clocks of processes on one machine agree; a little slack for a claim dated a moment ahead. */
const CLAIM_SKEW_MS = 5_000

/** Whether `batch`'s claim still holds: its claimer lives and claimed it within CLAIM_HOLDS_MS. */
export function claimHolds(batch: PendingBatch, now = Date.now()): boolean {
  const age = now - Date.parse(batch.claimed_at)
  return age >= -CLAIM_SKEW_MS && age < CLAIM_HOLDS_MS && isSameProcess(batch.claimer)
}

/**
 * A pending batch whose claim no longer holds (its claimer died before
 * printing it, or no wait is at work on it), and that concerns this wait
 * (any, for a plain `wait`; one touching its ids or scope otherwise).
 */
function findOrphan(
  request: WaitRequest,
  pending: PendingBatch[],
  runs: Map<string, RunEntry>,
  archived: RunEntry[],
  reported: Record<string, string>,
): PendingBatch | undefined {
  const orphans = pending.filter((p) => !claimHolds(p))
  if (orphans.length === 0) return undefined
  if (!request.ids && !request.scope) return orphans[0]
  const inScope = selectBatch({
    runs,
    archived,
    owner: request.owner,
    reported,
    claimed: new Set(),
    scope: request.scope,
    ids: request.ids,
  }).candidates
  const keys = new Set(inScope.map((c) => memberKey(c.meta.run, c.meta.run_instance_id)))
  return orphans.find((p) => [...p.members, ...p.attention].some((m) => keys.has(memberKey(m.run, m.run_instance_id))))
}

/**
 * The orphaned pending batch this wait delivers again, rebuilt from the Runs
 * it names (never its text: wait/orphan.ts); one left with nothing is dropped
 * from the journal (`dropped`), and its Runs come in fresh batches.
 */
function takeOrphan(
  request: WaitRequest,
  journal: DeliveryJournal,
  snapshot: WaitSnapshot,
): {orphan?: PendingBatch; dropped: boolean} {
  let dropped = false
  for (;;) {
    const orphan = findOrphan(request, journal.pending, snapshot.runs, snapshot.archived, snapshot.reported)
    if (!orphan || rebuildOrphan(request.home, journal, orphan)) return {orphan, dropped}
    journal.pending = journal.pending.filter((p) => p !== orphan)
    dropped = true
  }
}

/** Forget a pending batch this process claimed but could not show: its members are ready for the next wait again. */
function withdrawClaim(request: WaitRequest, batchId: string): void {
  withJournal(request.home, request.owner, (journal) => {
    const index = journal.pending.findIndex((p) => p.batch_id === batchId)
    if (index !== -1) journal.pending.splice(index, 1)
    // Its members were left out of the owner's queue cursor when claimed: they are queued again.
    markQueueChanged(request.home, markerTag(request.owner))
    return {value: undefined, write: index !== -1}
  })
}

/** The shortest re-read interval the executors of these live Runs ask for; undefined when none must be polled. */
function shortestPoll(live: Array<Pick<RunMeta, 'executor'>>): number | undefined {
  let shortest: number | undefined
  for (const meta of live) {
    const ms = executorOf(meta).pollMs(meta)
    if (ms !== undefined && (shortest === undefined || ms < shortest)) shortest = ms
  }
  return shortest
}

/** Test-only: hold a claimed batch unprinted so a test can kill the wait there (platform/test-hooks.ts). */
function testPause(): void {
  testHookPause('waitPauseMs')
}

/**
 * Block until a batch is ready (or the timeout), print it with `print`, mark
 * it delivered. Returns the document and the exit code (0, 1, 4 or 124).
 */
export async function waitForBatch(request: WaitRequest, print: BatchPrinter): Promise<WaitOutcome> {
  ensureHome(request.home)
  const deadline = request.timeoutMs === undefined ? Infinity : Date.now() + request.timeoutMs
  const bell = new Doorbell(request.home)
  const settle = new SettleWindow(request.settleMs ?? DEFAULT_SETTLE_MS)
  let claimed: Extract<Attempt, {ready: true}>
  try {
    for (;;) {
      request.signal?.throwIfAborted()
      bell.clear()
      const result = attempt(request, Date.now() >= deadline, settle)
      // Outside the journal lock: lost Runs this look settled free their slots now, not when the wait ends.
      followUpEndedRuns()
      if (result.ready) {
        claimed = result
        break
      }
      if (!result.settling) settle.reset()
      await bell.next(
        result.pollMs !== undefined ? Math.min(deadline, Date.now() + result.pollMs) : deadline,
        request.signal,
      )
    }
  } finally {
    bell.close()
  }
  if (claimed.pending) testPause()
  const pending = claimed.pending
  try {
    await print(claimed.document)
  } catch (error) {
    if (pending && error instanceof BatchNotShown) withdrawClaim(request, pending.batch_id)
    throw error
  }
  if (pending) {
    const delivered = withJournal(request.home, request.owner, (journal) => {
      const current = journal.pending.find((p) => p.batch_id === pending.batch_id)
      if (current) markDelivered(request.home, journal, current)
      return {value: current, write: current !== undefined}
    })
    // Only once the journal no longer holds the batch: the members leave the run index.
    if (delivered) dropIndexMarkers(request.home, delivered.members, claimed.metas)
    // The backlog is delivered: a queue directory it grew is replaced by a fresh one (history/queue-renew.ts).
    if (delivered && !request.ids && claimed.document.deferred === 0)
      renewEmptiedQueues(request.home, [markerTag(request.owner)])
    if (request.collector) recordCollected(request.home, request.collector, claimed.document)
  }
  return {
    document: claimed.document,
    exitCode: batchExitCode(claimed.document, {
      requested: request.ids?.length ?? 0,
      silentStatuses: claimed.silentStatuses,
    }),
  }
}
