/**
 * What one look of `wait` reads: the live and unreported Runs from the run
 * index (run-index.ts), plus the few others selection needs to place them
 * (Runs named on the command line, and the ancestors of every Run read, so
 * scopes and trees resolve even through parents reported long ago). Its cost
 * follows the live and unreported Runs, not the history of the state root.
 */
import {runDir} from '../home.js'
import {readIndexedRuns} from '../run-index.js'
import {reportedInstance} from '../reported.js'
import {readRunState} from '../run-store.js'
import {isTerminal} from '../run-types.js'
import type {RunEntry} from './select.js'

export interface WaitSnapshot {
  /** Every Run read, by id. */
  runs: Map<string, RunEntry>
  /** Earlier generations not yet reported (from their index markers; dirs are generations/<n>/). */
  archived: RunEntry[]
  /** Run id -> its reported instance, for the Runs read that are not in the index. */
  reported: Record<string, string>
}

/** Read the index, the explicit `ids` and every ancestor of what was read. */
export function readWaitSnapshot(home: string, ids: string[] = []): WaitSnapshot {
  const runs = new Map<string, RunEntry>()
  const reported: Record<string, string> = Object.create(null)
  const indexed = readIndexedRuns(home)
  for (const state of indexed.runs) runs.set(state.meta.run, {dir: state.dir, meta: state.meta})
  const archived: RunEntry[] = indexed.archived.map((state) => ({dir: state.dir, meta: state.meta, archived: true}))
  /** Read a Run the index did not list (reported or silent when terminal). */
  const readOther = (id: string): RunEntry | undefined => {
    let entry = runs.get(id)
    if (entry || runs.has(id)) return entry
    let dir: string
    try {
      dir = runDir(home, id)
      const state = readRunState(dir, {withResult: false})
      entry = state ? {dir: state.dir, meta: state.meta} : undefined
    } catch {
      entry = undefined
    }
    if (!entry) return undefined
    runs.set(id, entry)
    if (isTerminal(entry.meta.status)) {
      const instance = reportedInstance(entry.dir)
      if (instance !== undefined) reported[id] = instance
    }
    return entry
  }
  for (const id of ids) readOther(id)
  // An owed generation's Run id is read too (its current generation places it under `wait RUN`).
  for (const entry of archived) readOther(entry.meta.run)
  for (const entry of [...runs.values(), ...archived]) {
    let up = entry.meta.parent
    for (let hops = 0; up && hops < 64; hops++) {
      if (runs.has(up.run)) break
      up = readOther(up.run)?.meta.parent
    }
  }
  return {runs, archived, reported}
}
