/**
 * Whether a Run instance was reported to its owner, recorded in the Run's own
 * state dir (`reported.json`: the instance, the owner, the batch). Keeping it
 * there, not in a per-owner list, is what stops delivery bookkeeping from
 * growing with history: the record goes wherever the Run goes (pruned,
 * copied, restored) and the state dirs stay the truth the index is rebuilt
 * from.
 */
import {existsSync, writeFileSync} from 'node:fs'
import {sep} from 'node:path'
import {runDir} from '../platform/home.js'
import {readRunMetaRaw} from './store.js'
import {readOwedArchive} from '../generations/owed.js'
import {readJsonFile, writeFileAtomic} from '../platform/state-files.js'

export const REPORTED_FILE = 'reported.json'

export interface ReportedRecord {
  run_instance_id: string
  owner: string
  batch_id: string
  reported_at: string
}

function reportedFile(dir: string): string {
  return dir + sep + REPORTED_FILE
}

/** The instance whose completion was reported, per the Run's state dir; undefined when none (or unreadable: then it is reported again rather than lost). */
export function reportedInstance(dir: string): string | undefined {
  // Most Runs a reader asks about are unreported: a failed open would cost an exception each.
  if (!existsSync(reportedFile(dir))) return undefined
  try {
    const record = readJsonFile<Partial<ReportedRecord>>(reportedFile(dir), {maxBytes: 64 * 1024})
    return typeof record?.run_instance_id === 'string' ? record.run_instance_id : undefined
  } catch {
    return undefined
  }
}

/**
 * Record that `instance` of the Run in `dir` was reported. Not fsynced: it is
 * written before the owner's delivery journal drops the batch, and a record
 * lost in a crash means the Run is reported again, never lost.
 *
 * The first record of a state dir is created in place (one create and one
 * write, not a temporary file and a rename: a batch marks up to 256 Runs).
 * That is safe because of the journal: a wait killed between the create and
 * the write leaves its batch pending, so the next wait delivers that batch
 * again and rewrites the record (atomically, as it is there now); until then
 * an empty record reads as "not reported", never as reported.
 */
export function recordReported(dir: string, record: ReportedRecord): void {
  const text = JSON.stringify(record) + '\n'
  try {
    writeFileSync(reportedFile(dir), text, {flag: 'wx'})
    return
  } catch (error) {
    // ENOENT: the state dir vanished (pruned): nothing left to report.
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') return
  }
  try {
    writeFileAtomic(reportedFile(dir), text, {durable: false})
  } catch {}
}

/**
 * Mark the Run instance `member` reported to `owner` in batch `batchId`,
 * where that instance's files are: the state dir for the current generation,
 * generations/<n>/ for an earlier one run.json lists as owed. Any other
 * instance has nothing to mark (its successor must not look reported).
 */
export function markInstanceReported(home: string, member: {run: string; run_instance_id: string}, owner: string, batchId: string): void {
  let dir: string
  try {
    dir = runDir(home, member.run)
    const meta = readRunMetaRaw(dir)
    if (!meta) return
    if (meta.run_instance_id !== member.run_instance_id) {
      // An earlier generation still owed: its mark goes into its archive (generations/<n>/).
      const archive = readOwedArchive(dir, meta, member.run_instance_id)
      if (!archive) return
      dir = archive.dir
    }
  } catch {
    return
  }
  recordReported(dir, {run_instance_id: member.run_instance_id, owner, batch_id: batchId, reported_at: new Date().toISOString()})
}
