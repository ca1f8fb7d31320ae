/**
 * The inbox journal as a kernel module (real files in a temp dir): bounds and
 * compaction, sequence numbers that survive it, the per-generation cursor,
 * and the generation-ref grammar used by `RUN@N`.
 */
import {readFileSync, statSync} from 'node:fs'
import {join} from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'
import {parseGenerationRef} from '../src/lib/base/records/generation-layout.js'
import {
  MAX_INBOX_BYTES,
  MAX_INBOX_RECORDS,
  appendInboxRecord,
  messageLine,
  readInbox,
  saveCursor,
  unreadRecords,
  validateMessage,
} from '../src/lib/kernel/runs/inbox.js'
import {removeDir, tempDir} from './helpers.js'

let dirs: string[] = []
afterEach(() => {
  for (const d of dirs) removeDir(d)
  dirs = []
})
const dir = () => {
  const d = tempDir('actors-inbox-')
  dirs.push(d)
  return d
}

describe('inbox journal', () => {
  it('stays within 512 records and 1 MiB, keeps the newest, and never reuses a sequence number', () => {
    const d = dir()
    for (let i = 1; i <= MAX_INBOX_RECORDS + 40; i++)
      appendInboxRecord(d, {message: `m${i}`, generation: 1, via: 'inbox'})
    const records = readInbox(d)
    expect(records.length).toBeLessThanOrEqual(MAX_INBOX_RECORDS)
    expect(records.at(-1)).toMatchObject({seq: MAX_INBOX_RECORDS + 40, message: `m${MAX_INBOX_RECORDS + 40}`})
    const seqs = records.map((r) => r.seq)
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b))
    expect(new Set(seqs).size).toBe(seqs.length)
    // Large messages: bounded by bytes too.
    const big = 'x'.repeat(60 * 1024)
    for (let i = 0; i < 40; i++) appendInboxRecord(d, {message: big, generation: 1, via: 'inbox'})
    expect(statSync(join(d, 'inbox.jsonl')).size).toBeLessThanOrEqual(MAX_INBOX_BYTES)
    for (const line of readFileSync(join(d, 'inbox.jsonl'), 'utf8').trim().split('\n'))
      expect(() => JSON.parse(line)).not.toThrow()
  })

  it('gives each generation the messages sent to it after its cursor', () => {
    const d = dir()
    appendInboxRecord(d, {message: 'for one', generation: 1, via: 'inbox'})
    appendInboxRecord(d, {message: 'resume', generation: 2, via: 'resume'})
    appendInboxRecord(d, {message: 'for two', generation: 2, via: 'inbox'})
    const first = unreadRecords(d, 2, false)
    expect(first.records.map((r) => r.message)).toEqual(['resume', 'for two'])
    saveCursor(d, 2, first.cursor)
    expect(unreadRecords(d, 2, false).records).toEqual([])
    expect(unreadRecords(d, 2, true).records.map((r) => r.message)).toEqual(['for one', 'resume', 'for two'])
    // A cursor of another generation does not count.
    expect(unreadRecords(d, 3, false).records).toEqual([])
    appendInboxRecord(d, {message: 'later', generation: 2, via: 'inbox'})
    expect(unreadRecords(d, 2, false).records.map((r) => r.message)).toEqual(['later'])
  })

  it('validates messages and writes them as one line', () => {
    expect(() => validateMessage('')).toThrow(/empty/)
    expect(() => validateMessage('é'.repeat(33 * 1024))).toThrow(/64 KiB/)
    expect(validateMessage('ok')).toBe('ok')
    expect(messageLine('plain text')).toBe('plain text')
    expect(messageLine('two\nlines')).toBe('"two\\nlines"')
  })

  it('parses RUN@N and refuses @0, @x and an empty id or number', () => {
    expect(parseGenerationRef('build')).toEqual({ref: 'build'})
    expect(parseGenerationRef('build@3')).toEqual({ref: 'build', generation: 3})
    expect(parseGenerationRef('/tmp/a@b/runs/build')).toEqual({ref: '/tmp/a@b/runs/build'})
    for (const bad of ['build@0', 'build@x', 'build@', '@2', 'build@-1', 'build@1.5'])
      expect(() => parseGenerationRef(bad), bad).toThrow(/generation/)
  })
})
