/**
 * Stop or kill a Run's whole subtree (SPEC: descendant Runs follow a stopped
 * or killed parent). Descendants are found through the children journals and
 * ended deepest first, so no child outlives the parent that would have
 * reaped it; queued children never started and are settled `cancelled`.
 */
import {readRunMetaRaw} from '../runs/store.js'
import {isTerminal} from '../records/run.js'
import {collectDescendants} from '../runs/children.js'
import {cancelQueuedRun} from '../launch/child-queue.js'

/** How one live Run is ended: the control service's endRun (injected, so trees do not depend on control). */
export type EndRun = (home: string, dir: string, mode: 'stop' | 'kill') => unknown

export interface CascadeOutcome {
  ended: string[]
  cancelled_queued: string[]
  errors: Array<{run: string; error: string}>
}

/**
 * End every live descendant of the Run in `dir`, deepest first, with `endRun`.
 * Repeats (at most 3 rounds) while Runs launched during the cascade appear.
 * Does not end the Run in `dir` itself: the caller does that after.
 */
export async function cascadeEnd(
  home: string,
  dir: string,
  mode: 'stop' | 'kill',
  endRun: EndRun,
): Promise<CascadeOutcome> {
  const outcome: CascadeOutcome = {ended: [], cancelled_queued: [], errors: []}
  const meta = readRunMetaRaw(dir)
  if (!meta) return outcome
  const done = new Set<string>()
  for (let round = 0; round < 3; round++) {
    const live = collectDescendants(home, dir, meta, {settled: true}).filter(
      (d) => !isTerminal(d.meta.status) && !done.has(d.dir),
    )
    if (live.length === 0) break
    // Queued ones first: ending a running sibling frees a slot, which would start them.
    for (const descendant of live.filter((d) => d.meta.status === 'queued')) {
      if (cancelQueuedRun(home, descendant, mode === 'kill' ? 'parent_killed' : 'parent_stopped')) {
        done.add(descendant.dir)
        outcome.cancelled_queued.push(descendant.meta.run)
      }
    }
    live.sort((a, b) => b.level - a.level)
    for (const descendant of live) {
      if (done.has(descendant.dir)) continue
      done.add(descendant.dir)
      try {
        await endRun(home, descendant.dir, mode)
        outcome.ended.push(descendant.meta.run)
      } catch (error) {
        // A descendant that ended by itself meanwhile is not an error worth failing the cascade for.
        outcome.errors.push({run: descendant.meta.run, error: (error as Error).message})
      }
    }
  }
  return outcome
}
