/**
 * Stop or kill a Run's whole subtree (SPEC: descendant Runs follow a stopped
 * or killed parent). Descendants are found through the children journals and
 * ended deepest first, so no child outlives the parent that would have
 * reaped it; queued children never started and are settled `cancelled`.
 * A stop gives the tree one grace, not one per Run: every Run is marked and
 * sent SIGTERM first, then each is waited for (deepest first) until that
 * grace, counted from the first signal, runs out.
 */
import {readRunMetaRaw} from '../../kernel/runs/store.js'
import {isTerminal} from '../../base/records/run.js'
import {collectDescendants} from '../../kernel/runs/children.js'
import {cancelQueuedRun} from '../launch/child-queue.js'
import type {EndOptions} from '../../kernel/signals/end-run.js'

/** How one live Run is ended: the control service's endRun (injected, so trees do not depend on control). */
export type EndRun = (home: string, dir: string, mode: 'stop' | 'kill', options?: EndOptions) => unknown

export interface CascadeOptions {
  /** When the tree's stop began (ms since the epoch); the caller ends the Run itself with it afterwards. */
  graceFrom?: number
  /** A stop signals the Run in `dir` too, with its descendants (not when its service stops it). */
  signalSelf?: boolean
}

export interface CascadeOutcome {
  ended: string[]
  cancelled_queued: string[]
  errors: Array<{run: string; error: string}>
  /** The pids the first signal of a stop reached in the Run itself (signalSelf), which its own end then reports. */
  selfSignalled?: number[]
}

/** Passes over the tree: the first ends what it finds; each later one what appeared meanwhile. */
const PASSES = 4

/**
 * End every live descendant of the Run in `dir`, deepest first, with `endRun`.
 * Walks the tree again until a pass finds no live Run it has not ended (at
 * most PASSES; a launch under a tree marked ending is refused, so a second
 * pass normally finds nothing); what is still live after the last is
 * reported in `errors`. Does not end the Run in `dir` itself: the caller
 * does that after.
 */
export async function cascadeEnd(
  home: string,
  dir: string,
  mode: 'stop' | 'kill',
  endRun: EndRun,
  options: CascadeOptions = {},
): Promise<CascadeOutcome> {
  const outcome: CascadeOutcome = {ended: [], cancelled_queued: [], errors: []}
  const meta = readRunMetaRaw(dir)
  if (!meta) return outcome
  const done = new Set<string>()
  const liveNow = () =>
    collectDescendants(home, dir, meta, {settled: true, treeEnd: true}).filter(
      (d) => !isTerminal(d.meta.status) && !done.has(d.dir),
    )
  for (let round = 0; ; round++) {
    const live = liveNow()
    if (live.length === 0) break
    if (round === PASSES) {
      for (const left of live)
        outcome.errors.push({
          run: left.meta.run,
          error: `still ${left.meta.status} after ${PASSES} passes over the tree; end it with actors control ${left.meta.run} kill`,
        })
      break
    }
    // Queued ones first: ending a running sibling frees a slot, which would start them.
    for (const descendant of live.filter((d) => d.meta.status === 'queued')) {
      if (cancelQueuedRun(home, descendant, mode === 'kill' ? 'parent_killed' : 'parent_stopped')) {
        done.add(descendant.dir)
        outcome.cancelled_queued.push(descendant.meta.run)
      }
    }
    live.sort((a, b) => b.level - a.level)
    const graceFrom = round === 0 ? (options.graceFrom ?? Date.now()) : Date.now()
    if (mode === 'stop') {
      const self = await signalFirst(home, dir, live, endRun, options.signalSelf === true && round === 0)
      if (self.length > 0) outcome.selfSignalled = self
    }
    for (const descendant of live) {
      if (done.has(descendant.dir)) continue
      done.add(descendant.dir)
      try {
        await endRun(home, descendant.dir, mode, {graceFrom})
        outcome.ended.push(descendant.meta.run)
      } catch (error) {
        // A Run that ended by itself meanwhile is reported, and the cascade goes on.
        outcome.errors.push({run: descendant.meta.run, error: (error as Error).message})
      }
    }
  }
  return outcome
}

/**
 * A stop's first signal to every live Run of the tree, deepest first (then
 * the Run itself when asked), without waiting: each is marked `cancelled`
 * before its SIGTERM. One that ended meanwhile is left to the wait after,
 * which counts a Run this stop ended as ended (signals/end-run.ts).
 */
async function signalFirst(
  home: string,
  dir: string,
  live: Array<{dir: string; meta: {status: string}}>,
  endRun: EndRun,
  signalSelf: boolean,
): Promise<number[]> {
  let self: number[] = []
  for (const target of [
    ...live.filter((d) => d.meta.status !== 'queued').map((d) => d.dir),
    ...(signalSelf ? [dir] : []),
  ]) {
    try {
      const signalled = ((await endRun(home, target, 'stop', {signalOnly: true})) as {signalled?: number[]})?.signalled
      if (target === dir && Array.isArray(signalled)) self = signalled
    } catch {} // ended meanwhile, or refused: the wait after (or the caller, for the Run itself) says so
  }
  return self
}
