/**
 * The lock journal, `locks/journal.jsonl`: one record `{ts, op, lock, holder}`
 * per change, bounded to MAX_JOURNAL_RECORDS records and MAX_JOURNAL_BYTES.
 * Crossing either bound rewrites the file atomically with the newest half,
 * under the journal's own mutex (`.mutex/#journal.lock`: no lock name has a "#"; always taken last, so it nests under the
 * lock mutexes without any ordering problem).
 */
import {withLockSync} from '../../base/platform/file-lock.js'
import {appendJsonLine, fileSize, readJsonLines, writeFileAtomic} from '../../base/platform/state-files.js'
import {LinkedPathError} from '../../base/platform/private-files.js'
import {journalFile, lockMutexFile} from '../../base/records/lock.js'

export const MAX_JOURNAL_RECORDS = 512
export const MAX_JOURNAL_BYTES = 1024 * 1024
/** Records are never shorter than this, so below COUNT_FROM bytes the record bound cannot be crossed. */
const MIN_RECORD_BYTES = 60
const COUNT_FROM = MAX_JOURNAL_RECORDS * MIN_RECORD_BYTES

export type JournalOp = 'acquired' | 'released' | 'renewed' | 'expired' | 'freed' | 'waiting' | 'left'

export interface JournalRecord {
  ts: string
  op: JournalOp
  lock: string
  holder: string
  [extra: string]: unknown
}

/** Append records (one per change) and compact when a bound was crossed. Never throws: the journal is a record, not the state. */
export function appendLockJournal(home: string, records: Array<Omit<JournalRecord, 'ts'>>): void {
  if (records.length === 0) return
  const file = journalFile(home)
  try {
    withLockSync(lockMutexFile(home, '#journal'), () => {
      const ts = new Date().toISOString()
      for (const record of records) appendJsonLine(file, {ts, ...record})
      const size = fileSize(file)
      if (
        size > MAX_JOURNAL_BYTES ||
        (size > COUNT_FROM && readJsonLines(file, 2 * MAX_JOURNAL_BYTES).records.length > MAX_JOURNAL_RECORDS)
      )
        compactLocked(file)
    })
  } catch (error) {
    // Except a link planted in the journal's place: damage, named (nothing was appended through it).
    if (error instanceof LinkedPathError) throw error
  }
}

/** Keep the newest half of the records (and at most half the byte bound), written atomically. */
function compactLocked(file: string): void {
  const {records} = readJsonLines<JournalRecord>(file, 2 * MAX_JOURNAL_BYTES)
  const kept: string[] = []
  let bytes = 0
  for (let i = records.length - 1; i >= 0 && kept.length < MAX_JOURNAL_RECORDS / 2; i--) {
    const line = JSON.stringify(records[i]) + '\n'
    if (bytes + line.length > MAX_JOURNAL_BYTES / 2) break
    kept.push(line)
    bytes += line.length
  }
  writeFileAtomic(file, kept.reverse().join(''))
}
