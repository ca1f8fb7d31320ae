/**
 * What one look of `wait` reads: the live Runs and the owner's oldest
 * unreported ones from the run index (history/live-index.ts), plus the few others
 * selection needs to place them (Runs named on the command line, and the
 * ancestors of every Run read, so scopes and trees resolve even through
 * parents reported long ago). A plain `wait` reads the delivery queue in
 * windows, oldest first, with the rest of each tree it touches; a `wait` for
 * named Runs or inside a Run reads just their trees. Its cost follows what
 * is live plus what it delivers, not the history of the state root, nor the
 * whole backlog of unreported Runs: the owner's queue comes from its cursor
 * (history/index-queue.ts) while nothing was added to it.
 */
import {runDir} from '../../base/platform/home.js'
import {RunIndexReader, type IndexedRuns} from '../../kernel/history/index-reader.js'
import {treeTag, type QueueKey} from '../../kernel/history/index-markers.js'
import {isReported} from '../../kernel/runs/reported.js'
import {readRunState} from '../../kernel/runs/store.js'
import {isTerminal} from '../../base/records/run.js'
import {batchMeta, type RunEntry} from './select.js'

export interface SnapshotRequest {
  owner: string
  ids?: string[]
  scope?: {run: string; run_instance_id: string}
}

/** Queued Runs read at a time (see more()). */
const READ_STEP = 32

export class WaitSnapshot {
  /** Every Run read, by id. */
  readonly runs = new Map<string, RunEntry>()
  /** Earlier generations not yet reported (from their index markers; dirs are generations/<n>/). */
  readonly archived: RunEntry[] = []
  /** Run id -> its reported instance, for the Runs read that are not in the index. */
  readonly reported: Record<string, string> = Object.create(null)
  /** Whether every queued Run this wait could deliver was read (else more() reads on). */
  complete = false
  private readonly reader: RunIndexReader
  private readonly expanded = new Set<string>()
  private readonly archivedKeys = new Set<string>()

  /** Read the live Runs, then the explicit ids' or the scope's trees, or (a plain wait) the first `window` queued Runs and their trees. */
  constructor(
    private readonly home: string,
    private readonly request: SnapshotRequest,
    window: number,
  ) {
    // Every look of a wait holds its owner's journal lock: it may use and keep the owner's queue cursor.
    this.reader = new RunIndexReader(home, {owner: request.owner, cursor: true})
    this.add(this.reader.live())
    if (request.ids || request.scope) {
      // Everything in scope shares the root of a named Run or of the scope's Run.
      const tops = [...(request.ids ?? []), ...(request.scope ? [request.scope.run] : [])]
      const tags = new Set<string>()
      for (const id of tops) {
        const entry = this.readOther(id)
        if (entry) tags.add(treeTag(entry.meta))
      }
      this.add(this.reader.trees(tags))
      this.readAncestors()
      this.complete = true
      return
    }
    this.more(window)
  }

  /** Whether Run `id` was read or has an index marker (read or not): either way it is live or unreported. */
  isIndexed(id: string): boolean {
    return this.runs.has(id) || this.reader.hasMarker(id)
  }

  /** Keep the owner's queue for its next wait, less the batch just claimed (`run@instance` keys): RunIndexReader.saveCursor. */
  saveQueue(claimed: Set<string> = new Set()): void {
    this.reader.saveCursor(claimed)
  }

  /** Queued Runs of the owner not read (counted as deferred: the index lists them, unread). */
  get unread(): number {
    return this.complete ? 0 : this.reader.unread
  }

  /** Every queued Run not read yet sorts after this key. */
  get frontier(): QueueKey | undefined {
    return this.reader.frontier
  }

  /**
   * Read the next `count` queued Runs (oldest first), then the rest of the
   * tree of every finished, unreported Run of the owner read: a batch lists a
   * tree in preorder right after its top, and descendants may have ended later.
   */
  more(count: number): void {
    // In steps, each kept as just the fields a batch uses (batchMeta) before the next is read: a window of whole
    // run.json documents alive at once cost this, the busiest command, GC copying and page faults.
    for (let left = count; left > 0 && !this.reader.exhausted; left -= READ_STEP)
      this.add(this.reader.more(Math.min(READ_STEP, left)))
    for (;;) {
      this.readAncestors()
      const tags = new Set<string>()
      for (const entry of [...this.runs.values(), ...this.archived]) {
        const m = entry.meta
        if (
          !isTerminal(m.status) ||
          m.owner !== this.request.owner ||
          m.notification === 'silent' ||
          this.reported[m.run] === m.run_instance_id
        )
          continue
        const tag = treeTag(m)
        if (!this.expanded.has(tag)) tags.add(tag)
      }
      if (tags.size === 0) break
      for (const tag of tags) this.expanded.add(tag)
      this.add(this.reader.trees(tags))
    }
    this.complete = this.reader.unread === 0
  }

  private add(found: IndexedRuns): void {
    for (const state of found.runs) this.runs.set(state.meta.run, {dir: state.dir, meta: batchMeta(state.meta)})
    for (const state of found.archived) {
      const key = `${state.meta.run}@${state.meta.run_instance_id}`
      if (this.archivedKeys.has(key)) continue
      this.archivedKeys.add(key)
      this.archived.push({dir: state.dir, meta: batchMeta(state.meta), archived: true})
    }
  }

  /** Read a Run the index did not list (reported or silent when terminal). */
  private readOther(id: string): RunEntry | undefined {
    let entry = this.runs.get(id)
    if (entry || this.runs.has(id)) return entry
    try {
      // A parent's id, not a listed dir: a link in its place is passed over, never read through.
      const state = readRunState(runDir(this.home, id), {withResult: false, refuseLink: true})
      entry = state ? {dir: state.dir, meta: batchMeta(state.meta)} : undefined
    } catch {
      entry = undefined
    }
    if (!entry) return undefined
    this.runs.set(id, entry)
    if (isTerminal(entry.meta.status)) {
      if (isReported(entry.dir, entry.meta.run_instance_id)) this.reported[id] = entry.meta.run_instance_id
    }
    return entry
  }

  /** Every ancestor of what was read, and an owed generation's current Run (it places it under `wait RUN`). */
  private readAncestors(): void {
    for (const entry of this.archived) this.readOther(entry.meta.run)
    for (const entry of [...this.runs.values(), ...this.archived]) {
      let up = entry.meta.parent
      for (let hops = 0; up && hops < 64; hops++) {
        if (this.runs.has(up.run)) break
        up = this.readOther(up.run)?.meta.parent
      }
    }
  }
}
