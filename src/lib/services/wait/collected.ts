/**
 * What a coordinator's own waits collected. A `wait` run inside a Run (a
 * coordinator fanning out) reports its batch to the tree's owner, so the
 * owner's later batch holds only the coordinator: the person who started it
 * would never see the children. Each delivered batch of such a wait is
 * therefore credited to the Run it ran in, in that Run's `collected.json`
 * (bounded: totals, counts and the first MAX_COLLECTED Runs), and the
 * coordinator's batch row shows them. Who receives which batch is unchanged.
 */
import {join} from 'node:path'
import {runDir} from '../../base/platform/home.js'
import {archivedGenerationDir} from '../../base/records/generation-layout.js'
import {runGeneration} from '../../base/records/run.js'
import {withLockSync} from '../../base/platform/file-lock.js'
import {firstOutputLine} from '../../kernel/runs/logs.js'
import {foldedLine} from '../../base/platform/text.js'
import {readRunMetaRaw} from '../../kernel/runs/store.js'
import {readJsonFile, writeJsonAtomic} from '../../base/platform/state-files.js'

export const COLLECTED_SCHEMA = 'actors-collected-v1'
/** Runs listed per coordinator (the rest are counted). */
export const MAX_COLLECTED = 10
const MAX_COLLECTED_SUMMARY = 200

/** One Run a coordinator's wait collected: its status and the first line of its output (else its summary). */
export interface CollectedRun {
  run: string
  status: string
  summary: string
}

interface CollectedFile {
  schema: typeof COLLECTED_SCHEMA
  /** The coordinator instance the waits ran in (a later generation starts over). */
  run_instance_id: string
  total: number
  counts: Record<string, number>
  runs: CollectedRun[]
}

/** What a batch row says about the Runs its Run's own waits collected. */
export interface CollectedField {
  collected: CollectedRun[]
  /** How many Runs its waits collected in all (more than `collected` lists when over MAX_COLLECTED). */
  collected_total: number
}

function collectedFile(dir: string): string {
  return join(dir, 'collected.json')
}

/** What recordCollected reads of a delivered batch (batch.ts's BatchDocument has these fields and more). */
export interface DeliveredBatch {
  members: number
  counts: Record<string, number>
  rows: Array<{run: string; status: string; summary: string; archived?: boolean; generation?: number}>
}

/**
 * Credit the members of `document`, just delivered by a wait that ran inside
 * `collector`, to that Run. Best effort and never throws: the batch is
 * delivered already, and this is only what the coordinator's row will show.
 */
export function recordCollected(
  home: string,
  collector: {run: string; run_instance_id: string},
  document: DeliveredBatch,
): void {
  if (document.members === 0) return
  const dir = runDir(home, collector.run)
  try {
    if (readRunMetaRaw(dir)?.run_instance_id !== collector.run_instance_id) return
    const fresh = document.rows.map((row): CollectedRun => {
      let line = ''
      try {
        // Where the kernel keeps the Run, never the row's own word (a row is as good as the journal it came from).
        const at = runDir(home, row.run)
        line = firstOutputLine(row.archived ? archivedGenerationDir(at, runGeneration(row)) : at)
      } catch {}
      return {run: row.run, status: row.status, summary: foldedLine(line || row.summary, MAX_COLLECTED_SUMMARY)}
    })
    withLockSync(join(dir, '.collected.lock'), () => {
      let current: CollectedFile | undefined
      try {
        current = readJsonFile<CollectedFile>(collectedFile(dir), {schema: COLLECTED_SCHEMA})
      } catch {}
      const base: CollectedFile =
        current && current.run_instance_id === collector.run_instance_id && Array.isArray(current.runs)
          ? current
          : {schema: COLLECTED_SCHEMA, run_instance_id: collector.run_instance_id, total: 0, counts: {}, runs: []}
      const counts = {...base.counts}
      for (const [status, n] of Object.entries(document.counts)) counts[status] = (counts[status] ?? 0) + n
      writeJsonAtomic(collectedFile(dir), {
        ...base,
        total: base.total + document.members,
        counts,
        runs: [...base.runs, ...fresh].slice(0, MAX_COLLECTED),
      })
    })
  } catch {}
}

/** The `collected` fields of the row of the Run in `dir` (instance `runInstanceId`); empty when its waits collected nothing. */
export function readCollected(dir: string, runInstanceId: string): CollectedField {
  try {
    const file = readJsonFile<CollectedFile>(collectedFile(dir), {schema: COLLECTED_SCHEMA, oftenMissing: true})
    if (
      file &&
      file.run_instance_id === runInstanceId &&
      Array.isArray(file.runs) &&
      Number.isSafeInteger(file.total)
    ) {
      const runs = file.runs
        .filter((r) => r && typeof r.run === 'string' && typeof r.status === 'string')
        .slice(0, MAX_COLLECTED)
        .map((r) => ({
          run: r.run,
          status: r.status,
          summary: foldedLine(String(r.summary ?? ''), MAX_COLLECTED_SUMMARY),
        }))
      return {collected: runs, collected_total: Math.max(file.total, runs.length)}
    }
  } catch {}
  return {collected: [], collected_total: 0}
}
