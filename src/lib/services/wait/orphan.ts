/**
 * A pending batch left by a wait that died before printing it is delivered
 * again by the owner's next wait, but never as the text the journal holds:
 * the journal is writable by every Run of the user, and a neighbour planted a
 * batch saying a live Run ended `done`, which was printed and marked the Run
 * reported while it ran on (its real end was then lost to the owner). So its
 * rows and attention items are read again from the Runs it names: each
 * member must be the same instance of a Run of this owner, finished, not
 * reported by another batch, with its end proven (wait/proven-ends.ts). What does not
 * check out is dropped and stays unreported, for a later wait to deliver
 * from the Run itself; a batch left with nothing is discarded.
 */
import {runDir} from '../../base/platform/home.js'
import {isTerminal} from '../../base/records/run.js'
import {archivedGenerationDir, archivedGenerations} from '../../base/records/generation-layout.js'
import {reportedIn} from '../../kernel/runs/reported.js'
import {readRunState} from '../../kernel/runs/store.js'
import {findAttention} from './attention.js'
import {buildBatchDocument, MAX_ROWS, readRowFacts, type RowFacts} from './batch.js'
import {shownMembers} from './ended-on-request.js'
import type {DeliveryJournal, MemberRef, PendingBatch} from './journal.js'
import {holdUnprovenEnds} from './proven-ends.js'
import {batchMeta, memberKey, type RunEntry} from './select.js'

/** Newest generations looked through for an archived member (a Run's archive is rarely longer). */
const MAX_GENERATIONS_LOOKED = 64

/** The Run (or archived generation) a member ref names, read from its own dir; undefined when it is not there. */
function readMember(home: string, ref: MemberRef): RunEntry | undefined {
  const dir = runDir(home, ref.run)
  const read = (at: string, archived: boolean): RunEntry | undefined => {
    try {
      const state = readRunState(at, {withResult: false, refuseLink: true})
      if (!state || state.meta.run !== ref.run || state.meta.run_instance_id !== ref.run_instance_id) return undefined
      return {dir: state.dir, meta: batchMeta(state.meta), ...(archived ? {archived: true} : {})}
    } catch {
      return undefined
    }
  }
  if (!ref.archived) return read(dir, false)
  for (const n of archivedGenerations(dir).reverse().slice(0, MAX_GENERATIONS_LOOKED)) {
    const entry = read(archivedGenerationDir(dir, n), true)
    if (entry) return entry
  }
  return undefined
}

/**
 * Rebuild `orphan` (in place) from the Runs it names, for `owner`; returns
 * false when nothing of it checks out (the caller discards it).
 */
export function rebuildOrphan(home: string, journal: DeliveryJournal, orphan: PendingBatch): boolean {
  const owner = journal.owner
  const entries: RunEntry[] = []
  const seen = new Set<string>()
  for (const ref of orphan.members) {
    const key = memberKey(ref.run, ref.run_instance_id)
    if (seen.has(key)) continue
    seen.add(key)
    const entry = readMember(home, ref)
    if (!entry || entry.meta.owner !== owner || entry.meta.notification === 'silent') continue
    if (!isTerminal(entry.meta.status)) continue
    // Reported by another batch: not owed. By this one: its wait died marking it, after printing (delivered again whole).
    const reportedBy = reportedIn(entry.dir, entry.meta.run_instance_id)
    if (reportedBy !== undefined && reportedBy !== orphan.batch_id) continue
    entries.push(entry)
  }
  // An end the Run wrote while a process of it still lives is no end yet (the same proof a fresh batch needs).
  const looked = new Map(entries.map((e) => [e.meta.run, e]))
  holdUnprovenEnds(looked, entries)
  const members = entries.filter((e) => e.archived || isTerminal(looked.get(e.meta.run)!.meta.status))
  const attention = rebuildAttention(home, journal, orphan)
  if (members.length === 0 && attention.length === 0) return false
  const facts = new Map<string, RowFacts>()
  for (const m of shownMembers(members, undefined).slice(0, MAX_ROWS))
    facts.set(memberKey(m.meta.run, m.meta.run_instance_id), readRowFacts(m))
  orphan.members = members.map((m) => ({
    run: m.meta.run,
    run_instance_id: m.meta.run_instance_id,
    ...(m.archived ? {archived: true} : {}),
  }))
  orphan.attention = attention.map((a) => ({run: a.run, run_instance_id: a.run_instance_id, event_id: a.event_id}))
  orphan.document = buildBatchDocument({
    owner,
    selection: {members, deferred: 0, pending: [], unknown: [], already_reported: []},
    facts,
    attention,
    timedOut: false,
    batchId: orphan.batch_id,
  })
  return true
}

/** The orphan's attention items that its Runs' own Traces hold and that were not reported yet. */
function rebuildAttention(home: string, journal: DeliveryJournal, orphan: PendingBatch) {
  const wanted = new Set(orphan.attention.map((a) => `${memberKey(a.run, a.run_instance_id)}\u0000${a.event_id}`))
  const entries: RunEntry[] = []
  const runs = new Set<string>()
  for (const ref of orphan.attention) {
    const key = memberKey(ref.run, ref.run_instance_id)
    if (runs.has(key)) continue
    runs.add(key)
    const entry = readMember(home, {run: ref.run, run_instance_id: ref.run_instance_id})
    if (entry && entry.meta.owner === journal.owner) entries.push(entry)
  }
  return findAttention(entries, journal, new Set()).filter((item) =>
    wanted.has(`${memberKey(item.run, item.run_instance_id)}\u0000${item.event_id}`),
  )
}
