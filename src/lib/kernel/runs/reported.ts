/**
 * Whether a Run instance was reported to its owner, recorded in the Run's own
 * state dir (`reported.json`). Keeping it there, not in a per-owner list, is
 * what stops delivery bookkeeping from growing with history: the record goes
 * wherever the Run goes (pruned, copied, restored) and the state dirs stay
 * the truth the index is rebuilt from.
 *
 * Two forms, both read: a Run's own record (`{run_instance_id, owner,
 * batch_id, reported_at}`), and a batch record (`{run_instance_ids, owner,
 * batch_id, reported_at}`) that one delivered batch writes once and
 * hard-links as every member's reported.json: one new inode per batch and
 * one link(2) per member, instead of a new file per Run. The file is the
 * same for each member; what makes it that member's record is that it lists
 * the member's instance.
 */
import {existsSync, linkSync, renameSync} from 'node:fs'
import {writeStateFile} from '../../base/platform/private-files.js'
import {join, sep} from 'node:path'
import {runDir} from '../../base/platform/home.js'
import {readRunMetaRaw} from './store.js'
import {readOwedArchive} from './generation-owed.js'
import {readBoundedText, unlinkQuietly, writeFileAtomic} from '../../base/platform/state-files.js'
import {testHookNumber} from '../../base/platform/test-hooks.js'

export const REPORTED_FILE = 'reported.json'
/** A batch record lists at most MAX_MEMBERS (256) instances of about 40 bytes each. */
const MAX_RECORD_BYTES = 64 * 1024

/** One Run's record (the form a single report, the legacy migration and a failed link write). */
export interface ReportedRecord {
  run_instance_id: string
  owner: string
  batch_id: string
  reported_at: string
}

/** One batch's record, shared (hard-linked) by its members' reported.json. */
export interface BatchReportedRecord {
  run_instance_ids: string[]
  owner: string
  batch_id: string
  reported_at: string
}

/** A Run instance to mark; `archived`: an earlier generation (its files are in generations/<n>/). */
interface MemberRef {
  run: string
  run_instance_id: string
  archived?: boolean
}

function reportedFile(dir: string): string {
  return dir + sep + REPORTED_FILE
}

/** Whether the state dir `dir` records `instance` as reported (either form); false when it has no record or an unreadable one (then it is reported again rather than lost). */
export function isReported(dir: string, instance: string): boolean {
  return reportedIn(dir, instance) !== undefined
}

/** The batch that reported `instance` of the Run in `dir` (its batch_id, '' when the record names none); undefined as isReported is false. */
export function reportedIn(dir: string, instance: string): string | undefined {
  // Most Runs a reader asks about are unreported: a failed open would cost an exception each.
  if (!existsSync(reportedFile(dir))) return undefined
  try {
    const text = readBoundedText(reportedFile(dir), MAX_RECORD_BYTES)
    // Cheap refusal first: a record that does not mention the instance is not its record.
    if (text === undefined || !text.includes(instance)) return undefined
    const record = JSON.parse(text) as Partial<ReportedRecord & BatchReportedRecord>
    const marks =
      record.run_instance_id === instance ||
      (Array.isArray(record.run_instance_ids) && record.run_instance_ids.includes(instance))
    if (!marks) return undefined
    return typeof record.batch_id === 'string' ? record.batch_id : ''
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
 * write, not a temporary file and a rename). That is safe because of the
 * journal: a wait killed between the create and the write leaves its batch
 * pending, so the next wait delivers that batch again and rewrites the
 * record (atomically, as it is there now); until then an empty record reads
 * as "not reported", never as reported.
 */
export function recordReported(dir: string, record: ReportedRecord): void {
  const text = JSON.stringify(record) + '\n'
  try {
    writeStateFile(reportedFile(dir), text, 'create')
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
 * Where the record of instance `member` belongs: the state dir for the
 * current generation, generations/<n>/ for an earlier one run.json lists as
 * owed; undefined for any other instance (its successor must not look
 * reported) or a vanished Run. run.json is read now, not trusted from the
 * batch's selection: the id may have been relaunched since.
 */
function reportedDirOf(home: string, member: MemberRef): string | undefined {
  try {
    const dir = runDir(home, member.run)
    // Never relaunched (no generations/, which a relaunch makes before it moves anything): the member is the dir's
    // one instance, so run.json need not be read (a batch marks up to 256). Were the dir replaced by hand since,
    // the record names an instance its Run does not have: nothing looks reported that was not.
    if (!member.archived && !existsSync(dir + sep + 'generations')) return dir
    const meta = readRunMetaRaw(dir)
    if (!meta) return undefined
    if (meta.run_instance_id === member.run_instance_id) return dir
    // An earlier generation still owed: its mark goes into its archive (generations/<n>/).
    return readOwedArchive(dir, meta, member.run_instance_id)?.dir
  } catch {
    return undefined
  }
}

/** Mark the Run instance `member` reported to `owner` in batch `batchId` (see reportedDirOf for where). */
export function markInstanceReported(home: string, member: MemberRef, owner: string, batchId: string): void {
  const dir = reportedDirOf(home, member)
  if (dir)
    recordReported(dir, {
      run_instance_id: member.run_instance_id,
      owner,
      batch_id: batchId,
      reported_at: new Date().toISOString(),
    })
}

/**
 * Mark every member of a delivered batch reported: one batch record, written
 * once to `scratch` (a file name outside runs/ on the same file system; the
 * caller holds the owner's journal lock, so no other writer uses it) and
 * hard-linked as each member's reported.json, then removed from `scratch`.
 * A member whose link fails (no hard links here, the link limit) gets its own
 * record instead. A wait killed midway leaves its batch pending in the
 * journal, so the next wait delivers it again and finishes the marking; a
 * scratch file it left is replaced then (unlinked first: members linked to
 * it keep their copy).
 */
export function markBatchReported(
  home: string,
  members: MemberRef[],
  owner: string,
  batchId: string,
  scratch: string,
): void {
  const placed: Array<{dir: string; instance: string}> = []
  for (const member of members) {
    const dir = reportedDirOf(home, member)
    if (dir) placed.push({dir, instance: member.run_instance_id})
  }
  const reportedAt = new Date().toISOString()
  const own = (p: {dir: string; instance: string}) =>
    recordReported(p.dir, {run_instance_id: p.instance, owner, batch_id: batchId, reported_at: reportedAt})
  if (placed.length <= 1) {
    placed.forEach(own)
    return
  }
  const record: BatchReportedRecord = {
    run_instance_ids: placed.map((p) => p.instance),
    owner,
    batch_id: batchId,
    reported_at: reportedAt,
  }
  try {
    unlinkQuietly(scratch)
    writeStateFile(scratch, JSON.stringify(record) + '\n', 'create')
  } catch {
    placed.forEach(own)
    return
  }
  const killAfter = testHookNumber('markKillAfter')
  let linked = 0
  for (const p of placed) {
    if (!linkRecord(scratch, p.dir)) own(p)
    // Test-only: die midway through marking, as a wait killed there would (test/history.test.ts).
    if (++linked === killAfter) process.kill(process.pid, 'SIGKILL')
  }
  unlinkQuietly(scratch)
}

/** Link the batch record `from` as the reported.json of `dir` (replacing one there, atomically); false when it cannot be linked. */
function linkRecord(from: string, dir: string): boolean {
  const file = reportedFile(dir)
  try {
    linkSync(from, file)
    return true
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    // ENOENT: the state dir vanished (pruned): nothing left to report, and nothing to fall back to.
    if (code === 'ENOENT') return true
    if (code !== 'EEXIST') return false
  }
  // A record is there already (a redelivered batch, an earlier instance's): replace it whole, never write into it (it may be shared).
  const temp = `${file}.${process.pid}.tmp`
  try {
    try {
      linkSync(from, temp)
    } catch {
      // Left by an earlier process of the same pid: replace it.
      unlinkQuietly(temp)
      linkSync(from, temp)
    }
    renameSync(temp, file)
    return true
  } catch {
    unlinkQuietly(temp)
    return false
  }
}

/** The scratch name of a batch record, in the owner's delivery dir (`delivery/.<owner>.reported`): one at a time per owner, under its journal lock. */
export function batchRecordScratch(deliveryDir: string, owner: string): string {
  return join(deliveryDir, `.${owner}.reported`)
}
