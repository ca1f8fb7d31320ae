/**
 * The delivery journal of one owner (`$ACTORS_HOME/delivery/<owner>.json`, a
 * lowdb document): the batches being delivered right now (`pending`, with the
 * wait process that claimed them), attention events of live or unreported
 * Runs already reported, and the last few delivered batch ids. Every
 * read-modify-write happens under a cross-process lock, which is what lets
 * two `wait`s of one owner split the work without reporting a Run twice or
 * losing one. Which Runs were reported is recorded in each Run's own state
 * dir (reported.ts), so the journal stays small however long the history.
 */
import {lstatSync, renameSync} from 'node:fs'
import {makePrivateDir, writeStateFile} from '../../base/platform/private-files.js'
import {basename, dirname, join} from 'node:path'
import {LowSync, type SyncAdapter} from 'lowdb'
import {corruptStateError} from '../../base/platform/errors.js'
import {inertText} from '../../base/platform/text.js'
import {validateOwner} from '../../kernel/runs/lineage.js'
import {withLockSync} from '../../base/platform/file-lock.js'
import type {ProcessIdentity} from '../../base/platform/process-identity.js'
import {
  damagedName,
  moveAside,
  parseJsonDocument,
  readBoundedText,
  unlinkQuietly,
} from '../../base/platform/state-files.js'
import {batchRecordScratch, markBatchReported, markInstanceReported} from '../../kernel/runs/reported.js'
import {BATCH_SCHEMA, type BatchDocument} from './batch.js'

export const DELIVERY_SCHEMA = 'actors-delivery-v1'
const MAX_JOURNAL_BYTES = 32 * 1024 * 1024
/** Delivered batch ids kept for reference (the journal must not grow without bound). */
const DELIVERED_HISTORY = 32

export interface MemberRef {
  run: string
  run_instance_id: string
  /** An earlier generation of the Run (read from generations/<n>/), not its current one. */
  archived?: boolean
}

export interface PendingBatch {
  batch_id: string
  phase: 'pending'
  claimed_at: string
  claimer: ProcessIdentity
  members: MemberRef[]
  attention: Array<MemberRef & {event_id: string}>
  document: BatchDocument
}

export interface DeliveryJournal {
  schema: typeof DELIVERY_SCHEMA
  owner: string
  /** Earlier format: Run id -> reported instance. Now always empty (moved into the Runs' reported.json). */
  reported: Record<string, string>
  /** Run id -> attention events of its current instance already reported (live or unreported Runs only). */
  attention_reported: Record<string, {run_instance_id: string; event_ids: string[]}>
  pending: PendingBatch[]
  delivered: Array<{batch_id: string; delivered_at: string; members: number; attention: number}>
}

export function journalFile(home: string, owner: string): string {
  return join(home, 'delivery', `${validateOwner(owner)}.json`)
}

function emptyJournal(owner: string): DeliveryJournal {
  return {schema: DELIVERY_SCHEMA, owner, reported: {}, attention_reported: {}, pending: [], delivered: []}
}

/**
 * The journal in `text`; pending batches that are not whole are taken out of
 * it into `damaged` (JournalFile sets them aside), attention entries that are
 * not fail it.
 */
function parseJournal(file: string, owner: string, text: string, damaged: unknown[]): DeliveryJournal {
  const doc = parseJsonDocument<Partial<DeliveryJournal>>(file, text, DELIVERY_SCHEMA)
  if (doc.owner !== owner)
    throw corruptStateError(file, `belongs to owner ${JSON.stringify(doc.owner)}, not "${owner}"`)
  const isRecord = (v: unknown) => v !== null && typeof v === 'object' && !Array.isArray(v)
  if (
    !isRecord(doc.reported) ||
    !isRecord(doc.attention_reported) ||
    !Array.isArray(doc.pending) ||
    !Array.isArray(doc.delivered)
  ) {
    throw corruptStateError(file, 'is missing reported, attention_reported, pending or delivered')
  }
  const isRef = (v: unknown) =>
    isRecord(v) && typeof (v as MemberRef).run === 'string' && typeof (v as MemberRef).run_instance_id === 'string'
  const whole = (batch: unknown) => {
    const p = batch as Partial<PendingBatch>
    return (
      isRecord(p) &&
      typeof p.batch_id === 'string' &&
      isRecord(p.claimer) &&
      Array.isArray(p.members) &&
      p.members.every(isRef) &&
      Array.isArray(p.attention) &&
      p.attention.every((a) => isRef(a) && typeof a.event_id === 'string') &&
      isRecord(p.document) &&
      p.document!.schema === BATCH_SCHEMA
    )
  }
  damaged.push(...doc.pending.filter((batch) => !whole(batch)))
  doc.pending = doc.pending.filter(whole)
  for (const entry of Object.values(doc.attention_reported as Record<string, unknown>)) {
    const e = entry as DeliveryJournal['attention_reported'][string]
    if (!isRecord(e) || typeof e.run_instance_id !== 'string' || !Array.isArray(e.event_ids))
      throw corruptStateError(file, 'has a damaged attention_reported entry')
  }
  return doc as DeliveryJournal
}

/**
 * The journal file for lowdb, replaced whole on every write without renaming
 * over it: ext4 writes out a file renamed over another before the rename
 * returns (its auto_da_alloc), which cost a wait 1 to 20 ms per write, twice
 * per batch, on a busy disk. The new text goes whole to `.<owner>.json.next`,
 * the journal is unlinked, and the next one renamed into its place. A writer
 * killed between those two leaves no journal but a whole next one, which
 * read() takes; a next one that does not parse was never committed (a
 * proper prefix of a JSON object never parses). Only ever used under the
 * owner's journal lock.
 */
class JournalFile implements SyncAdapter<DeliveryJournal> {
  private readonly next: string

  constructor(
    private readonly file: string,
    private readonly parse: (text: string, damaged: unknown[]) => DeliveryJournal,
  ) {
    this.next = join(dirname(file), `.${basename(file)}.next`)
  }

  read(): DeliveryJournal | null {
    setAsideUnlessFile(this.file)
    const damaged: unknown[] = []
    // Bounded, and anything planted in its place since is named as such (never a hang, never a stack trace).
    const text = readBoundedText(this.file, MAX_JOURNAL_BYTES)
    let journal: DeliveryJournal
    if (text !== undefined) journal = this.parse(text, damaged)
    else {
      try {
        const next = readBoundedText(this.next, MAX_JOURNAL_BYTES)
        if (next === undefined) return null
        journal = this.parse(next, damaged)
      } catch {
        return null
      }
      renameSync(this.next, this.file)
    }
    if (damaged.length > 0) this.setAsideBatches(journal, damaged)
    return journal
  }

  /**
   * Pending batches that are not whole (a Run can write any into the
   * journal: every wait of the owner died on one) are written beside the
   * journal as damaged, named once on stderr, and the journal is written
   * without them. Their members stay unreported: the next batch reads them
   * from the Runs themselves.
   */
  private setAsideBatches(journal: DeliveryJournal, damaged: unknown[]): void {
    const aside = damagedName(this.file)
    writeStateFile(aside, JSON.stringify({pending: damaged}))
    this.write(journal)
    process.stderr.write(
      inertText(
        `actors: ${this.file} held ${damaged.length} damaged pending batch${damaged.length === 1 ? '' : 'es'}: moved aside to ${aside}; their Runs are delivered again from their own records`,
      ) + '\n',
    )
  }

  write(journal: DeliveryJournal): void {
    setAsideUnlessFile(this.next)
    writeStateFile(this.next, JSON.stringify(journal))
    unlinkQuietly(this.file)
    renameSync(this.next, this.file)
  }
}

/**
 * Move what is not a plain file (a FIFO, a symbolic link, a directory, a
 * second name of another file) out of a journal path: a Run can put one
 * there (the root is its user's to write), and every later `wait` of the
 * owner failed on it until removed by hand. It is renamed beside it as
 * damaged, never opened (no blocking on a FIFO) nor followed, and the
 * journal starts again empty: which Runs were reported lives in their own
 * dirs (reported.ts), so nothing is delivered twice; at worst an attention
 * event is. Said once on stderr: the next wait finds a plain file or none.
 */
function setAsideUnlessFile(file: string): void {
  const there = lstatSync(file, {throwIfNoEntry: false})
  if (!there || (there.isFile() && there.nlink === 1)) return
  const what = there.isSymbolicLink()
    ? 'a symbolic link'
    : there.isFIFO()
      ? 'a FIFO'
      : there.isDirectory()
        ? 'a directory'
        : there.isFile()
          ? 'a second name of another file (a hard link)'
          : 'not a regular file'
  const aside = moveAside(file)
  process.stderr.write(
    inertText(`actors: ${file} was ${what}: moved aside to ${aside}; the delivery record starts again empty`) + '\n',
  )
}

/**
 * Read-modify-write the owner's journal under its lock. `change` mutates the
 * document in place and returns a value; the document is written back only
 * when `change` returns with `write: true`.
 */
export function withJournal<T>(
  home: string,
  owner: string,
  change: (journal: DeliveryJournal) => {value: T; write: boolean},
): T {
  const file = journalFile(home, owner)
  makePrivateDir(join(home, 'delivery'))
  return withLockSync(
    `${file}.lock`,
    () => {
      const db = new LowSync<DeliveryJournal>(
        new JournalFile(file, (text, damaged) => parseJournal(file, owner, text, damaged)),
        emptyJournal(owner),
      )
      db.read()
      const {value, write} = change(db.data)
      if (write) db.write()
      return value
    },
    {timeoutMs: 30_000},
  )
}

/**
 * Record a printed batch as delivered: its members are marked reported in
 * their state dirs first (one batch record, hard-linked into each), then the batch leaves `pending` (written by the
 * caller), so a crash in between redelivers it rather than losing it.
 */
export function markDelivered(home: string, journal: DeliveryJournal, batch: PendingBatch): void {
  markBatchReported(
    home,
    batch.members,
    journal.owner,
    batch.batch_id,
    batchRecordScratch(join(home, 'delivery'), journal.owner),
  )
  journal.pending = journal.pending.filter((p) => p.batch_id !== batch.batch_id)
  for (const member of batch.members) delete journal.attention_reported[member.run]
  for (const event of batch.attention) {
    const entry = journal.attention_reported[event.run]
    if (entry && entry.run_instance_id === event.run_instance_id) {
      if (!entry.event_ids.includes(event.event_id)) entry.event_ids.push(event.event_id)
    } else {
      journal.attention_reported[event.run] = {run_instance_id: event.run_instance_id, event_ids: [event.event_id]}
    }
  }
  journal.delivered = [
    ...journal.delivered,
    {
      batch_id: batch.batch_id,
      delivered_at: new Date().toISOString(),
      members: batch.members.length,
      attention: batch.attention.length,
    },
  ].slice(-DELIVERED_HISTORY)
}

/**
 * Forget attention entries of Runs no longer live or unreported (reported,
 * pruned): they can never be candidates again, so the journal stays bounded.
 */
export function forgetVanished(journal: DeliveryJournal, exists: (run: string) => boolean): boolean {
  let changed = false
  for (const run of Object.keys(journal.attention_reported)) {
    if (!exists(run)) {
      delete journal.attention_reported[run]
      changed = true
    }
  }
  return changed
}

/**
 * Move a `reported` map of the earlier journal format into the Runs' own
 * reported.json files, then empty it. Returns whether the journal changed.
 */
export function migrateLegacyReported(home: string, journal: DeliveryJournal): boolean {
  const entries = Object.entries(journal.reported)
  if (entries.length === 0) return false
  for (const [run, instance] of entries) {
    if (typeof instance === 'string')
      markInstanceReported(home, {run, run_instance_id: instance}, journal.owner, 'legacy')
  }
  journal.reported = {}
  return true
}
