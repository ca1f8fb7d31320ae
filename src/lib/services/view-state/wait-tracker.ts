/**
 * What `actors wait` shows while it waits (TTY only): the Runs it is waiting
 * for that are still live, and those that finished since the wait began, in
 * the order they finished (they go to scrollback once). It reads the same
 * Runs store as `inspect --watch`; the completion batch itself stays the wait
 * service's decision.
 */
import type {RunListing} from '../../kernel/history/inspect.js'
import {summarizeRun, type RunSummary} from '../../kernel/runs/summary.js'
import {readRunState} from '../../kernel/runs/store.js'
import {isTerminal} from '../../base/records/run.js'
import {pendingWhy} from '../../kernel/executors/index.js'
import {displayRunName} from '../../base/records/generation-layout.js'
import type {AttentionFeed, AttentionNote} from './attention-feed.js'
import {nestByParent, type Nested} from './run-nesting.js'

export interface WaitScope {
  owner: string
  /** Explicit Run ids; none = every Run of the owner (silent ones excepted, as in the batch). */
  ids?: string[]
  /** Inside a Run: only its descendants (the wait service's scope). */
  within?: {run: string}
}

export type WaitLogItem = {kind: 'finished'; run: RunSummary} | {kind: 'attention'; note: AttentionNote}

export interface WaitProgress {
  pending: RunSummary[]
  /** Why a pending Run has not got further (state dir → `waiting for lock db`, `Slurm job 12 PENDING: Resources`). */
  why: Map<string, string>
  /** The pending Runs as the tree they form (children under their parents), for drawing. */
  pendingTree: Nested<RunSummary>[]
  /**
   * Trees of the scope that still have a live Run: what the batch waits for.
   * Runs started inside a tree join it without raising this number.
   */
  waitingFor: number
  finished: RunSummary[]
  /** Finished Runs and attention events, in the order they were seen (each once). */
  log: WaitLogItem[]
}

/** Follows listings over time; `update` returns the progress after each one. */
export class WaitTracker {
  /** Runs already terminal at the first look: the past, not news. */
  private baseline?: Set<string>
  private readonly finished: RunSummary[] = []
  private readonly log: WaitLogItem[] = []
  private readonly reported = new Set<string>()
  /** The trees counted at the last look: a count that only goes down while no new tree starts. */
  private readonly trees = new Set<string>()
  /** The Runs pending at the last look, by `run/instance`: one missing from the next listing ended meanwhile. */
  private lastPending = new Map<string, RunSummary>()

  /** `attention`: where attention events of the Runs in scope come from (none: not shown). */
  constructor(
    private readonly scope: WaitScope,
    private readonly attention?: AttentionFeed,
  ) {}

  private inScope(run: RunSummary, byId: Map<string, RunSummary>): boolean {
    if (run.owner !== this.scope.owner) return false
    if (this.scope.ids?.length) return this.scope.ids.includes(run.run) || this.scope.ids.includes(run.root)
    if (run.notification === 'silent') return false
    const within = this.scope.within?.run
    if (!within) return true
    // A descendant of the waiting Run: its parent chain reaches it.
    for (let parent = run.parent, hops = 0; parent && hops < 64; parent = byId.get(parent)?.parent ?? null, hops++) {
      if (parent === within) return true
    }
    return false
  }

  /** The top of `run`'s tree within the scope: its farthest ancestor that is in scope. */
  private treeOf(run: RunSummary, scoped: Map<string, RunSummary>): string {
    let top = run
    for (let hops = 0; top.parent && scoped.has(top.parent) && hops < 64; hops++) top = scoped.get(top.parent)!
    return top.run
  }

  /**
   * A Run pending at the last look and gone from this listing: the listing
   * holds live and unreported Runs, so a child that ended and was collected
   * at once by its parent's own wait (fanout's last child) leaves it without
   * ever being listed as ended. Its own state dir still says how it ended.
   */
  private vanished(key: string, run: RunSummary): void {
    if (this.reported.has(key)) return
    const state = readRunState(run.state_dir)
    const ended = state && summarizeRun(state)
    if (!ended || ended.run_instance_id !== run.run_instance_id || !isTerminal(ended.status)) return
    this.reported.add(key)
    this.finished.push(ended)
    this.log.push({kind: 'finished', run: ended})
  }

  /** Fold in a new listing. */
  update(listing: Pick<RunListing, 'runs'>): WaitProgress {
    const byId = new Map(listing.runs.map((run) => [run.run, run]))
    const scoped = new Map<string, RunSummary>()
    for (const run of listing.runs) if (this.inScope(run, byId)) scoped.set(run.run, run)
    const first = this.baseline === undefined
    const baseline = (this.baseline ??= new Set())
    const pending: RunSummary[] = []
    this.trees.clear()
    const seen = new Set<string>()
    for (const run of scoped.values()) {
      const key = `${run.run}/${run.run_instance_id}`
      seen.add(key)
      if (!isTerminal(run.status)) {
        pending.push(run)
        this.trees.add(this.treeOf(run, scoped))
      } else if (first) baseline.add(key)
      else if (!baseline.has(key) && !this.reported.has(key)) {
        // Finished since the wait began, whether or not a look caught it live.
        this.reported.add(key)
        this.finished.push(run)
        this.log.push({kind: 'finished', run})
      }
    }
    for (const [key, run] of this.lastPending) if (!seen.has(key)) this.vanished(key, run)
    this.lastPending = new Map(pending.map((run) => [`${run.run}/${run.run_instance_id}`, run]))
    if (this.attention) {
      const notes = this.attention.update(
        [...scoped.values()].map((run) => ({
          dir: run.state_dir,
          run: displayRunName(run.run, run.generation),
          status: run.status,
        })),
      )
      for (const note of notes) this.log.push({kind: 'attention', note})
    }
    const pendingTree = nestByParent(
      pending,
      (run) => run.run,
      (run) => run.parent,
    )
    const why = new Map<string, string>()
    for (const run of pending) {
      const reason = pendingWhy(run)
      if (reason) why.set(run.state_dir, reason)
    }
    return {
      pending: pendingTree.map((n) => n.item),
      why,
      pendingTree,
      waitingFor: this.trees.size,
      finished: [...this.finished],
      log: [...this.log],
    }
  }
}
