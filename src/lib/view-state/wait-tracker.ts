/**
 * What `actors wait` shows while it waits (TTY only): the Runs it is waiting
 * for that are still live, and those that finished since the wait began, in
 * the order they finished (they go to scrollback once). It reads the same
 * Runs store as `inspect --watch`; the completion batch itself stays the wait
 * service's decision.
 */
import type {RunListing} from '../history/inspect.js'
import type {RunSummary} from '../runs/summary.js'
import {isTerminal} from '../records/run.js'

export interface WaitScope {
  owner: string
  /** Explicit Run ids; none = every Run of the owner (silent ones excepted, as in the batch). */
  ids?: string[]
  /** Inside a Run: only its descendants (the wait service's scope). */
  within?: {run: string}
}

export interface WaitProgress {
  pending: RunSummary[]
  finished: RunSummary[]
}

/** Follows listings over time; `update` returns the progress after each one. */
export class WaitTracker {
  private readonly seenLive = new Set<string>()
  private readonly finished: RunSummary[] = []
  private readonly reported = new Set<string>()

  constructor(private readonly scope: WaitScope) {}

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

  /** Fold in a new listing. */
  update(listing: Pick<RunListing, 'runs'>): WaitProgress {
    const pending: RunSummary[] = []
    const byId = new Map(listing.runs.map((run) => [run.run, run]))
    for (const run of listing.runs) {
      if (!this.inScope(run, byId)) continue
      const key = `${run.run}/${run.run_instance_id}`
      if (!isTerminal(run.status)) {
        this.seenLive.add(key)
        pending.push(run)
      } else if (this.seenLive.has(key) && !this.reported.has(key)) {
        this.reported.add(key)
        this.finished.push(run)
      }
    }
    return {pending, finished: [...this.finished]}
  }
}
