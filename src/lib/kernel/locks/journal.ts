/**
 * The lock journal, `locks/journal.jsonl`: one record `{ts, op, lock, holder}`
 * per change, bounded to MAX_JOURNAL_RECORDS records and MAX_JOURNAL_BYTES.
 * Crossing either bound rewrites the file atomically with the newest half,
 * under the journal's own mutex (`.mutex/#journal.lock`: no lock name has a "#"; always taken last, so it nests under the
 * lock mutexes without any ordering problem).
 */
import {lstatSync} from 'node:fs'
import {withLockSync} from '../../base/platform/file-lock.js'
import {fileSize, moveAside, readJsonLines, writeFileAtomic} from '../../base/platform/state-files.js'
import {appendStateFile} from '../../base/platform/private-files.js'
import {inertText} from '../../base/platform/text.js'
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

/**
 * Append records (one per change) and compact when a bound was crossed.
 * Never throws: the journal is a record, not the state, and is written after
 * the change it records was committed, so a journal that cannot be written
 * must never turn that change into a failure (an acquire told it failed
 * would keep the slot it holds). Whatever stands in the journal's place (a
 * link, a FIFO, a directory, a second name of another file) is moved aside,
 * named once on stderr, and the journal starts again; nothing is written
 * through it. Any other failure is named on stderr and the records dropped.
 */
export function appendLockJournal(home: string, records: Array<Omit<JournalRecord, 'ts'>>): void {
  if (records.length === 0) return
  const file = journalFile(home)
  try {
    withLockSync(lockMutexFile(home, '#journal'), () => {
      const ts = new Date().toISOString()
      const lines = records.map((record) => JSON.stringify({ts, ...record}) + '\n').join('')
      appendLines(file, lines)
      const size = fileSize(file)
      if (
        size > MAX_JOURNAL_BYTES ||
        (size > COUNT_FROM && readJsonLines(file, 2 * MAX_JOURNAL_BYTES).records.length > MAX_JOURNAL_RECORDS)
      )
        compactLocked(file)
    })
  } catch (error) {
    process.stderr.write(
      inertText(
        `actors: the lock journal ${file} was not written (${(error as Error).message}); the lock change stands`,
      ) + '\n',
    )
  }
}

/** Append `lines` to the journal; a non-file in its place is moved aside (named) and a fresh journal begun. */
function appendLines(file: string, lines: string): void {
  const what = notAJournal(file)
  if (what !== undefined) {
    const aside = moveAside(file)
    process.stderr.write(
      inertText(`actors: the lock journal ${file} was ${what}: moved aside to ${aside}; the journal starts again`) +
        '\n',
    )
  }
  // O_NOFOLLOW, O_NONBLOCK, single link (openStateFile): one planted after the look above is refused, not written through.
  appendStateFile(file, lines)
}

/** What is at `file` when it is not the journal's own regular file; undefined when it is one, or nothing is there. */
function notAJournal(file: string): string | undefined {
  const there = lstatSync(file, {throwIfNoEntry: false})
  if (there === undefined || (there.isFile() && there.nlink === 1)) return undefined
  if (there.isSymbolicLink()) return 'a symbolic link'
  if (there.isDirectory()) return 'a directory'
  return there.isFile() ? 'a second name of another file (a hard link)' : 'not a regular file'
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
