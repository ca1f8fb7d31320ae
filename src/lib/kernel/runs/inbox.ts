/**
 * A Run's inbox journal (`inbox.jsonl` in its state dir): every message
 * `actors send` gave the Run, one JSON record a line, for all its
 * generations. Bounded (512 records, 1 MiB): an append that would cross a
 * bound first drops the oldest records. Records carry a sequence number that
 * survives compaction, so readers keep their place with a cursor
 * (`inbox-cursor.json`, one of the generation's own files: each generation
 * reads the messages sent to it).
 */
import {randomUuid} from '../../base/platform/builtins.js'
import {join} from 'node:path'
import {usageError} from '../../base/platform/errors.js'
import {withLockSync} from '../../base/platform/file-lock.js'
import {appendStateFile} from '../../base/platform/private-files.js'
import {readJsonFile, readJsonLines, writeFileAtomic, writeJsonAtomic} from '../../base/platform/state-files.js'

export const MAX_MESSAGE_BYTES = 64 * 1024
export const MAX_INBOX_RECORDS = 512
export const MAX_INBOX_BYTES = 1024 * 1024

/** How a message reached the Run: written to its stdin, left in its inbox, or the message that resumed it. */
export type InboxVia = 'stdin' | 'inbox' | 'resume'

export interface InboxRecord {
  id: string
  seq: number
  ts: string
  message: string
  generation: number
  via: InboxVia
}

export function inboxFile(dir: string): string {
  return join(dir, 'inbox.jsonl')
}

function inboxLock(dir: string): string {
  return join(dir, '.inbox.lock')
}

/** Refuse a message that is empty or over 64 KiB (exit 2) before anything is written. */
export function validateMessage(message: string): string {
  const bytes = Buffer.byteLength(message)
  if (bytes > MAX_MESSAGE_BYTES) {
    throw usageError(
      `the message is ${bytes} bytes, over the 64 KiB limit (${MAX_MESSAGE_BYTES} bytes)`,
      'put large content in a file and send its path',
    )
  }
  if (message === '')
    throw usageError('the message is empty', 'send some text, e.g. actors send RUN "focus on the tests"')
  return message
}

/** Every record of the inbox, oldest first (damaged lines are skipped). */
export function readInbox(dir: string): InboxRecord[] {
  return readJsonLines<InboxRecord>(inboxFile(dir), MAX_INBOX_BYTES * 2).records.filter(
    (r) => Number.isInteger(r.seq) && typeof r.message === 'string',
  )
}

/** Append a message; compacts first when the journal would cross a bound. Returns the stored record. */
export function appendInboxRecord(dir: string, input: NewInboxRecord): InboxRecord {
  return appendInboxRecords(dir, [input])[0]
}

export type NewInboxRecord = {message: string; generation: number; via: InboxVia; id?: string}

/**
 * Append messages in order as one write (a forked child's seed: launch/fork.ts); compacts first when the journal
 * would cross a bound, keeping the newest records and every new one. Returns the stored records.
 */
export function appendInboxRecords(dir: string, inputs: NewInboxRecord[]): InboxRecord[] {
  return withLockSync(inboxLock(dir), () => {
    const records = readInbox(dir)
    let seq = records.at(-1)?.seq ?? 0
    const ts = new Date().toISOString()
    const added: InboxRecord[] = inputs.map((input) => ({
      id: input.id ?? randomUuid(),
      seq: ++seq,
      ts,
      message: input.message,
      generation: input.generation,
      via: input.via,
    }))
    const text = added.map((r) => JSON.stringify(r) + '\n').join('')
    const lines = records.map((r) => JSON.stringify(r) + '\n')
    const bytes = lines.reduce((sum, l) => sum + Buffer.byteLength(l), 0)
    if (records.length + added.length > MAX_INBOX_RECORDS || bytes + Buffer.byteLength(text) > MAX_INBOX_BYTES) {
      // Keep the newest half (by count and by size) so compaction is rare.
      const kept: string[] = []
      let keptBytes = Buffer.byteLength(text)
      for (let i = lines.length - 1; i >= 0; i--) {
        const size = Buffer.byteLength(lines[i])
        if (kept.length + added.length >= MAX_INBOX_RECORDS / 2 || keptBytes + size > MAX_INBOX_BYTES / 2) break
        kept.unshift(lines[i])
        keptBytes += size
      }
      writeFileAtomic(inboxFile(dir), kept.join('') + text)
    } else if (text) {
      appendStateFile(inboxFile(dir), text)
    }
    return added
  })
}

/** Where a generation stopped reading: the last sequence number it was given. */
interface InboxCursor {
  generation: number
  seq: number
}

function cursorFile(dir: string): string {
  return join(dir, 'inbox-cursor.json')
}

/** Records of `generation` after its cursor (all records with `all`), and the cursor to save once they are printed. */
export function unreadRecords(dir: string, generation: number, all: boolean): {records: InboxRecord[]; cursor: number} {
  const cursor = readCursor(dir, generation)
  const records = readInbox(dir).filter((r) => all || (r.generation === generation && r.seq > cursor))
  return {records, cursor: Math.max(cursor, ...records.filter((r) => r.generation === generation).map((r) => r.seq))}
}

export function readCursor(dir: string, generation: number): number {
  try {
    const c = readJsonFile<InboxCursor>(cursorFile(dir))
    return c && c.generation === generation && Number.isInteger(c.seq) ? c.seq : 0
  } catch {
    return 0
  }
}

/** Save the cursor (only forward). */
export function saveCursor(dir: string, generation: number, seq: number): void {
  withLockSync(inboxLock(dir), () => {
    if (readCursor(dir, generation) < seq) writeJsonAtomic(cursorFile(dir), {generation, seq})
  })
}

/** A message as one line: as it is, or as a JSON string when it holds a line break. */
export function messageLine(message: string): string {
  return /[\r\n]/.test(message) ? JSON.stringify(message) : message
}

/** Where the supervisor of an `inbox: stdin` Run records the last message it wrote to the command's stdin. */
export function stdinAckFile(dir: string): string {
  return join(dir, 'inbox-stdin.json')
}

export function readStdinAck(dir: string, generation: number): number {
  try {
    const ack = readJsonFile<InboxCursor>(stdinAckFile(dir))
    return ack && ack.generation === generation && Number.isInteger(ack.seq) ? ack.seq : 0
  } catch {
    return 0
  }
}
