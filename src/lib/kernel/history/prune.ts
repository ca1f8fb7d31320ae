/**
 * Deleting finished Runs. Only terminal Runs are ever removed, each under its
 * lock after a re-check, so a Run that is live (or being relaunched) is never
 * touched. Artifacts that live inside a state dir go with it unless kept.
 */
import {existsSync, renameSync} from 'node:fs'
import {refuseLinkedDir} from '../../base/platform/private-files.js'
import {keepArtifacts} from '../runs/artifacts.js'
import {listUnitCgroups, removeUnitCgroups} from '../containment/prune-cgroups.js'
import {liveStateDirs, livePidsOfEnded, type LiveOfDir} from '../containment/unit-facts.js'
import {join} from 'node:path'
import {EXIT} from '../../base/platform/errors.js'
import {refuseLinkedRuns, resolveRunRef, runDir, stateDirKey} from '../../base/platform/home.js'
import {withLockSync} from '../../base/platform/file-lock.js'
import {removeTree} from '../../base/platform/remove-tree.js'
import {notifyStateChange} from '../../base/bell/notify.js'
import {compactLaunches, removeRunDirName} from './live-index.js'
import {dropIndexMarker} from './index-markers.js'
import {listRunNames, readRunMetaRaw, readRunResult, readRunState, runFile, type RunState} from '../runs/store.js'
import {
  archivedGenerationDir,
  archivedGenerations,
  generationOf,
  generationsDir,
} from '../../base/records/generation-layout.js'
import {isTerminal} from '../../base/records/run.js'

export interface PruneOptions {
  refs: string[]
  olderThanMs?: number
  keepArtifacts: boolean
  /** Delete only earlier generations (generations/<n>/), keeping every Run's current one. */
  earlierGenerations?: boolean
}

export interface PruneReport {
  pruned: string[]
  /** With earlierGenerations: the generations removed, per Run. */
  pruned_generations?: Array<{run: string; generations: number[]}>
  kept_artifacts: Array<{run: string; name: string; path: string}>
  /** Runs left in place: `problem` says why (damaged files, a named Run not found, a live one). */
  skipped: Array<{run: string; reason: string; problem: 'damaged' | 'not_found' | 'live'}>
  /** Cgroups of Runs that no longer exist (or ended), emptied and removed (SPEC: Containment). */
  removed_cgroups?: string[]
}

/**
 * The exit code of a prune: named Runs that could not be pruned make it fail
 * like the commands that act on one Run would (4 not found, 5 a live Run is
 * refused), and a damaged Run dir (named or met along the way) is exit 1 so
 * it gets looked at. Live Runs met while pruning everything are simply kept;
 * one recorded as ended whose processes still run is refused like a named
 * live one (its run.json was written by the Run, or a neighbour).
 */
export function pruneExitCode(report: PruneReport): number {
  const problems = new Set(report.skipped.map((s) => s.problem))
  if (problems.has('not_found')) return EXIT.notFound
  if (problems.has('live')) return EXIT.refused
  if (problems.has('damaged')) return EXIT.failed
  return EXIT.ok
}

/**
 * Prune the named Runs, or every terminal Run when none are named. A Run goes
 * with all its generations; `earlierGenerations` removes only the archived
 * ones (generations/<n>/), of live Runs too.
 */
export function pruneRuns(home: string, options: PruneOptions): PruneReport {
  // runs/ itself a link: nothing is removed, nor runs/.cache written, through it.
  refuseLinkedRuns(home)
  const report: PruneReport = {pruned: [], kept_artifacts: [], skipped: []}
  // [containment] Cgroups are listed before the Runs: one made meanwhile belongs to a Run listed (and seen live) below.
  const cgroups = options.refs.length || options.earlierGenerations ? [] : listUnitCgroups(home)
  // Links in runs/ included: each is named as damage and kept (never read or removed through).
  const ids = options.refs.length ? options.refs.map((ref) => resolveRunRef(home, ref)) : listRunNames(home)
  if (options.earlierGenerations) return pruneEarlierGenerations(home, ids, options, report)
  const cutoff = options.olderThanMs === undefined ? undefined : Date.now() - options.olderThanMs
  const live = new Set<string>()
  const facts = new ProcFacts()
  for (const id of ids) {
    const dir = runDir(home, id)
    const state = readPruneCandidate(dir, id, options, report)
    if (!state) continue
    if (!isTerminal(state.meta.status)) {
      live.add(state.meta.run_instance_id)
      if (options.refs.length)
        report.skipped.push({run: id, reason: `still ${state.meta.status}; stop it first`, problem: 'live'})
      continue
    }
    // run.json is the Run's to write: one that says it ended while a process of its unit lives is live, whatever
    // it says (a neighbour's forged `done` had its dir deleted, and under cgroups its unit killed).
    const running = livePidsOfTerminal(state, facts)
    if (running.length) {
      live.add(state.meta.run_instance_id)
      report.skipped.push({run: id, reason: stillRunsReason(id, state, running), problem: 'live'})
      continue
    }
    if (cutoff !== undefined && endedAt(state) > cutoff) continue
    withLockSync(runFile(dir, 'lock'), () => {
      // Read whole now, result.json included: a Run about to be deleted whose files are damaged is kept and named.
      let again: RunState | undefined
      try {
        again = readRunState(dir)
      } catch (error) {
        report.skipped.push({run: id, reason: (error as Error).message, problem: 'damaged'})
        return
      }
      if (!again || !isTerminal(again.meta.status)) return
      if (options.keepArtifacts)
        for (const kept of keepArtifacts(home, id, dir, again.result?.artifacts ?? []))
          report.kept_artifacts.push({run: id, ...kept})
      // Rename first (out of runs/, under the run index's lock) so a half-deleted dir never looks like a Run.
      const doomed = join(home, `.pruning-${id}-${process.pid}`)
      removeTree(doomed)
      removeRunDirName(home, () => renameSync(dir, doomed))
      // A Run pruned before it was reported leaves the run index now, not when a wait's window reaches it.
      dropIndexMarker(home, id, again.meta.run_instance_id, again.meta)
      removeTree(doomed)
      report.pruned.push(id)
    })
  }
  if (cgroups.length) {
    const removed = removeUnitCgroups(home, cgroups, live)
    if (removed.length) report.removed_cgroups = removed
  }
  if (report.pruned.length) {
    // The launch log is a cache of the history (its readers skip ids no longer in runs/): a full disk that refuses
    // its rewrite must not fail a prune whose Runs are gone already. Each Run is pruned whole or not at all.
    try {
      compactLaunches(home)
    } catch {}
    notifyStateChange(home)
  }
  return report
}

/** What is alive of every state dir, read from /proc once per prune, and only once a Run recorded as ended asks. */
class ProcFacts {
  private named?: Map<string, LiveOfDir>
  get(): Map<string, LiveOfDir> {
    this.named ??= liveStateDirs()
    return this.named
  }
}

/**
 * The live processes of a Run recorded as ended (containment/unit-facts.ts
 * livePidsOfEnded: its supervisor, a process carrying its state dir, one in
 * its cgroup tree). Its cgroup tree is walked only while its cgroup dir
 * exists: a prune over thousands of ended Runs reads /proc once and makes one
 * stat per Run.
 */
function livePidsOfTerminal(state: RunState, facts: ProcFacts): number[] {
  const {dir, meta} = state
  const path = (meta.containment as {path?: unknown} | undefined)?.path
  const cgroupLeft = typeof path === 'string' && existsSync(path)
  if (!cgroupLeft && !facts.get().has(stateDirKey(dir))) return []
  return livePidsOfEnded(dir, meta, facts.get())
}

function stillRunsReason(id: string, state: RunState, pids: number[]): string {
  const shown = pids.slice(0, 5).join(', ')
  return `recorded as ${state.meta.status}, but processes of it still run (pid ${shown}); end them first (actors control ${id} kill)`
}

/** When a finished Run ended: run.json's mirror of its result (result.json for a Run written before the mirror), else when it was created. */
function endedAt(state: RunState): number {
  if (typeof state.meta.ended_at === 'string') return Date.parse(state.meta.ended_at)
  return Date.parse(readRunResult(state.dir, state.meta)?.completed_at ?? state.meta.created_at)
}

/**
 * A Run's state for prune, without its result.json (choosing which Runs to
 * prune needs run.json alone), or undefined after noting why it is skipped
 * (damaged; not found when named).
 */
function readPruneCandidate(dir: string, id: string, options: PruneOptions, report: PruneReport): RunState | undefined {
  let state
  try {
    // A link in a state dir's place is damage: kept and named, never read or removed through.
    refuseLinkedDir(dir)
    state = readRunState(dir, {withResult: false})
  } catch (error) {
    report.skipped.push({run: id, reason: (error as Error).message, problem: 'damaged'})
    return undefined
  }
  if (!state && options.refs.length) report.skipped.push({run: id, reason: 'not found', problem: 'not_found'})
  return state
}

/** `--earlier-generations`: remove archived generations (older than the cutoff), under each Run's lock. */
function pruneEarlierGenerations(home: string, ids: string[], options: PruneOptions, report: PruneReport): PruneReport {
  const cutoff = options.olderThanMs === undefined ? undefined : Date.now() - options.olderThanMs
  report.pruned_generations = []
  for (const id of ids) {
    const dir = runDir(home, id)
    const state = readPruneCandidate(dir, id, options, report)
    if (!state) continue
    const removed = withLockSync(runFile(dir, 'lock'), () => {
      const gone: number[] = []
      for (const n of archivedGenerations(dir)) {
        if (n >= generationOf(state.meta)) continue
        const archive = archivedGenerationDir(dir, n)
        const ended = Date.parse(String(readRunMetaRaw(archive)?.ended_at ?? ''))
        if (cutoff !== undefined && !(ended <= cutoff)) continue
        const doomed = join(generationsDir(dir), `.pruning-${n}-${process.pid}`)
        renameSync(archive, doomed)
        removeTree(doomed)
        gone.push(n)
      }
      return gone
    })
    if (removed.length) report.pruned_generations.push({run: id, generations: removed})
  }
  return report
}
