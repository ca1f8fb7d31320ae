/**
 * Choosing a completion batch from a snapshot of the state root (pure: no
 * I/O, so concurrency and ordering rules can be reasoned about and tested in
 * one place). A Run is a candidate for an owner when it is that owner's, not
 * silent, not yet reported (or named by the wait), not claimed by another
 * live `wait`, and inside the wait's scope. Candidates form trees (a Run under its nearest candidate
 * ancestor); a Run is eligible once it and every candidate ancestor are
 * terminal, which is how "a descendant appears only once its root is
 * terminal" holds. Trees are ordered by their top's terminal time, run id,
 * instance id; inside a tree, preorder.
 */
import {isTerminal, type RunMeta} from '../../base/records/run.js'
import {compareText} from '../../base/platform/compare.js'

export const MAX_MEMBERS = 256

/**
 * What a wait uses of a Run's run.json, in the order batchMeta() copies it. A
 * wait keeps a batch's worth of Runs (about 272) alive while it reads on;
 * whole documents (plans, env, process records) would cost the busiest
 * command GC copying and page faults for fields it never reads (snapshot.ts
 * keeps just these).
 */
const TYPED_FIELDS = [
  'run',
  'run_instance_id',
  'status',
  'owner',
  'parent',
  'root',
  'depth',
  'notification',
  'generation',
  'executor',
  'attention_flag',
  'attention_raised',
  'ending',
  // Where a finished Run's unit was, for the proof that nothing of it lives (proven-ends.ts): no second read.
  'containment',
] as const
/** Fields a wait takes as they are, whatever run.json says of them. */
const LOOSE_FIELDS = [
  'ended_at',
  'exit_code',
  'duration_ms',
  'reason',
  'artifacts_head',
  'artifacts_total',
  'budget_exceeded',
  // A queued Run's locks, for what holds it back (batch.ts pending rows); copied only when there.
  'waiting_for',
] as const
const BATCH_FIELDS = [...TYPED_FIELDS, ...LOOSE_FIELDS]

export type BatchMeta = Pick<RunMeta, (typeof TYPED_FIELDS)[number]> & {[F in (typeof LOOSE_FIELDS)[number]]?: unknown}

/** A copy of `meta` with just the fields of BatchMeta. */
export function batchMeta(meta: RunMeta): BatchMeta {
  const copy: Record<string, unknown> = {}
  for (const field of BATCH_FIELDS)
    if (field !== 'waiting_for' || meta.waiting_for !== undefined) copy[field] = meta[field]
  return copy as BatchMeta
}

export interface RunEntry {
  dir: string
  meta: BatchMeta
  /** An earlier generation still owed to its owner (dir is generations/<n>/). */
  archived?: boolean
}

export interface SelectionInput {
  /** Every readable Run of the state root, by id. */
  runs: Map<string, RunEntry>
  owner: string
  /** Run id -> reported instance (from the Runs' reported.json; see wait/snapshot.ts). */
  reported: Record<string, string>
  /** Earlier generations not yet reported (from the run index; each dir is generations/<n>/). */
  archived?: RunEntry[]
  /** `run\0instance` keys claimed by another live wait's pending batch. */
  claimed: Set<string>
  /** The Run the wait itself runs in: only its descendants are in scope. */
  scope?: {run: string; run_instance_id: string}
  /** Explicit Run ids: they and their descendants are the scope, they are what is waited for. */
  ids?: string[]
}

export interface Selection {
  /** Eligible Runs in batch order, at most MAX_MEMBERS. */
  members: RunEntry[]
  /** Eligible Runs left for a later batch. */
  deferred: number
  /** Waited-for Runs still live. */
  pending: RunEntry[]
  /** Explicit ids with no Run of this owner. */
  unknown: string[]
  /** Explicit ids this owner was already given (their rows come again: naming a Run asks for it again). */
  already_reported: string[]
  /** Explicit silent ids: waited for, never members. */
  silent: RunEntry[]
  /** How many Runs the wait waits for. */
  waited: number
  /** Every waited-for Run is terminal. */
  all_terminal: boolean
  /** In-scope candidates (any status): where attention events may come from. */
  candidates: RunEntry[]
  /** With a full batch: the top of the tree its last member belongs to (where the batch ends in tree order). */
  boundary?: RunEntry
}

export function memberKey(run: string, instance: string): string {
  return `${run}\u0000${instance}`
}

/** Who may be in a batch, and under whom: the rules of the module comment as three questions about an entry. */
interface Candidacy {
  /** This owner's, not silent, not reported or claimed, and in the wait's scope. */
  isCandidate(entry: RunEntry): boolean
  /** Terminal, and so is every candidate above it (a descendant appears only once its root is terminal). */
  isEligible(entry: RunEntry): boolean
  /** The entry's parent when that is a candidate too (the row it goes under). */
  candidateParent(entry: RunEntry): RunEntry | undefined
}

function candidacy(input: SelectionInput, ids: Set<string> | undefined): Candidacy {
  const {runs, owner, reported, claimed, scope} = input
  // A child of an earlier generation sits under that generation's entry when it is owed too.
  const archivedByInstance = new Map((input.archived ?? []).map((e) => [e.meta.run_instance_id, e]))
  const parentOf = (entry: RunEntry): RunEntry | undefined => {
    const ref = entry.meta.parent
    if (!ref) return undefined
    const current = runs.get(ref.run)
    const parent =
      current && current.meta.run_instance_id === ref.run_instance_id
        ? current
        : archivedByInstance.get(ref.run_instance_id)
    return parent && parent.meta.run === ref.run && parent !== entry ? parent : undefined
  }
  const inScope = (entry: RunEntry): boolean => {
    if (!ids && !scope) return true
    if (ids?.has(entry.meta.run)) return true
    const seen = new Set<RunEntry>([entry])
    for (let up = parentOf(entry); up && !seen.has(up); up = parentOf(up)) {
      seen.add(up)
      if (ids?.has(up.meta.run)) return true
      if (!ids && scope && up.meta.run === scope.run && up.meta.run_instance_id === scope.run_instance_id) return true
    }
    return false
  }
  const candidateMemo = new Map<RunEntry, boolean>()
  const isCandidate = (entry: RunEntry): boolean => {
    let value = candidateMemo.get(entry)
    if (value === undefined) {
      const m = entry.meta
      value =
        m.owner === owner &&
        m.notification !== 'silent' &&
        // Naming a Run asks for it again: its current generation is a candidate even once reported.
        (reported[m.run] !== m.run_instance_id || (ids?.has(m.run) === true && !entry.archived)) &&
        !claimed.has(memberKey(m.run, m.run_instance_id)) &&
        inScope(entry)
      candidateMemo.set(entry, value)
    }
    return value
  }
  const candidateParent = (entry: RunEntry): RunEntry | undefined => {
    const parent = parentOf(entry)
    return parent && isCandidate(parent) ? parent : undefined
  }
  const eligibleMemo = new Map<RunEntry, boolean>()
  const isEligible = (entry: RunEntry, depth = 0): boolean => {
    let value = eligibleMemo.get(entry)
    if (value === undefined) {
      const parent = candidateParent(entry)
      value = isTerminal(entry.meta.status) && (!parent || depth > 64 || isEligible(parent, depth + 1))
      eligibleMemo.set(entry, value)
    }
    return value
  }
  return {isCandidate, isEligible: (entry) => isEligible(entry), candidateParent}
}

/** What a `wait RUN ...` waits for, and what it reports about the ids it was given. */
interface WaitedRuns {
  waited: RunEntry[]
  unknown: string[]
  alreadyReported: string[]
  silent: RunEntry[]
  /** Explicit ids in a batch another live wait is printing right now: not ready for this wait until that
   * batch is delivered (this wait then answers them again), never silently dropped. */
  inFlight: number
}

function waitedRuns(input: SelectionInput, ids: Set<string>, isCandidate: Candidacy['isCandidate']): WaitedRuns {
  const {runs, owner, reported, claimed} = input
  const archived = input.archived ?? []
  const found: WaitedRuns = {waited: [], unknown: [], alreadyReported: [], silent: [], inFlight: 0}
  for (const id of ids) {
    const entry = runs.get(id)
    // `wait RUN` covers every unreported generation of RUN.
    const earlier =
      entry && entry.meta.owner === owner ? archived.filter((e) => e.meta.run === id && isCandidate(e)) : []
    found.waited.push(...earlier)
    if (!entry || entry.meta.owner !== owner) found.unknown.push(id)
    else if (entry.meta.notification === 'silent') found.silent.push(entry)
    else {
      // Still listed as given before (and answered again: isCandidate takes named Runs reported or not).
      if (reported[id] === entry.meta.run_instance_id && earlier.length === 0) found.alreadyReported.push(id)
      if (isCandidate(entry)) found.waited.push(entry)
      else if (claimed.has(memberKey(entry.meta.run, entry.meta.run_instance_id))) found.inFlight++
    }
  }
  return found
}

/**
 * The eligible candidates as a forest in batch order: tops by terminal time,
 * run id and instance; each descendant right after its parent. `boundary` is
 * the top whose tree reaches MAX_MEMBERS.
 */
function forestOrder(
  eligible: RunEntry[],
  candidateParent: Candidacy['candidateParent'],
): {ordered: RunEntry[]; boundary?: RunEntry} {
  const children = new Map<RunEntry, RunEntry[]>()
  const tops: RunEntry[] = []
  for (const entry of eligible) {
    const parent = candidateParent(entry)
    if (parent) {
      const list = children.get(parent) ?? []
      list.push(entry)
      children.set(parent, list)
    } else {
      tops.push(entry)
    }
  }
  const order = (a: RunEntry, b: RunEntry) =>
    compareText(terminalTime(a), terminalTime(b)) ||
    compareText(a.meta.run, b.meta.run) ||
    compareText(a.meta.run_instance_id, b.meta.run_instance_id)
  tops.sort(order)
  const ordered: RunEntry[] = []
  let boundary: RunEntry | undefined
  const visit = (entry: RunEntry) => {
    ordered.push(entry)
    for (const child of (children.get(entry) ?? []).sort(order)) visit(child)
  }
  for (const top of tops) {
    visit(top)
    if (!boundary && ordered.length >= MAX_MEMBERS) boundary = top
  }
  return {ordered, boundary}
}

/** Select the next batch; see the module comment for the rules. */
export function selectBatch(input: SelectionInput): Selection {
  const ids = input.ids ? new Set(input.ids) : undefined
  const rules = candidacy(input, ids)
  const candidates = [...input.runs.values(), ...(input.archived ?? [])].filter(rules.isCandidate)
  const {waited, unknown, alreadyReported, silent, inFlight}: WaitedRuns = ids
    ? waitedRuns(input, ids, rules.isCandidate)
    : {waited: candidates, unknown: [], alreadyReported: [], silent: [], inFlight: 0}
  const {ordered, boundary} = forestOrder(
    candidates.filter((c) => rules.isEligible(c)),
    rules.candidateParent,
  )
  const waitedAll = [...waited, ...silent]
  return {
    members: ordered.slice(0, MAX_MEMBERS),
    deferred: Math.max(0, ordered.length - MAX_MEMBERS),
    pending: waitedAll.filter((e) => !isTerminal(e.meta.status)),
    unknown,
    already_reported: alreadyReported,
    silent,
    waited: waitedAll.length + inFlight,
    all_terminal: inFlight === 0 && waitedAll.every((e) => isTerminal(e.meta.status)),
    candidates,
    boundary,
  }
}

/** Where a tree's top sorts among completion batches: its terminal time, run id, instance id (see selectBatch). */
export function treeOrderKey(entry: RunEntry): {ended: string; run: string; instance: string} {
  return {ended: terminalTime(entry), run: entry.meta.run, instance: entry.meta.run_instance_id}
}

/** When the Run ended (run.json mirrors the result); Runs without one sort last. */
function terminalTime(entry: RunEntry): string {
  const ended = entry.meta.ended_at
  return typeof ended === 'string' ? ended : '9999'
}
