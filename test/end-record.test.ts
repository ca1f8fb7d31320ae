/**
 * The unit's wrapper that records a command's end (containment/end-record.ts
 * RECORD_END), run as the kernel runs it (`sh -c RECORD_END actors-run FILE
 * TAG DEADLINE TIMEOUT GRACE ARGV...`) in a temp dir: the record it writes, and what it does with
 * whatever a Run left in the record's place.
 */
import {spawnSync} from 'node:child_process'
import {existsSync, lstatSync, readFileSync, statSync, symlinkSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {afterEach, beforeEach, describe, expect, it} from 'vitest'
import {endRecordFile, endRecordTag, readEndRecord, RECORD_END} from '../src/lib/kernel/containment/end-record.js'
import {removeDir, tempDir} from './helpers.js'

let dir: string
beforeEach(() => {
  dir = tempDir()
})
afterEach(() => removeDir(dir))

const key = {run_instance_id: 'instance-1', generation: 1, attempt: 1, step: 0}

/** The wrapper around `/bin/sh -c SCRIPT`, with `env` only; its status, within 10 s (null: it hung). */
function wrap(script: string, env: Record<string, string> = {}): number | null {
  const r = spawnSync(
    '/bin/sh',
    ['-c', RECORD_END, 'actors-run', endRecordFile(dir, 0), endRecordTag(key), '0', '0', '0', '/bin/sh', '-c', script],
    {env, timeout: 10_000, stdio: 'ignore'},
  )
  return r.status
}

describe('the end record', () => {
  it('is written by the wrapper itself, with no process started for it (an empty PATH finds no mv)', () => {
    expect(wrap('exit 3', {PATH: ''})).toBe(3)
    expect(readEndRecord(dir, key)).toEqual({exitCode: 3, signal: null})
    expect(statSync(endRecordFile(dir, 0)).mode & 0o777).toBe(0o600)
  })

  it('is not written through a link the Run left in its place', () => {
    const target = join(dir, 'target')
    symlinkSync(target, endRecordFile(dir, 0))
    expect(wrap('exit 4')).toBe(4)
    expect(existsSync(target)).toBe(false)
    expect(lstatSync(endRecordFile(dir, 0)).isSymbolicLink()).toBe(true)
    expect(readEndRecord(dir, key)).toBeUndefined()
  })

  it('leaves a FIFO or a file the Run left in its place unopened, and the wrapper still ends as its command did', () => {
    expect(spawnSync('mkfifo', [endRecordFile(dir, 0)]).status).toBe(0)
    expect(wrap('exit 5')).toBe(5)
    expect(lstatSync(endRecordFile(dir, 0)).isFIFO()).toBe(true)
    const forged = '{"forged": true}\n'
    removeDir(endRecordFile(dir, 0))
    writeFileSync(endRecordFile(dir, 0), forged)
    expect(wrap('exit 6')).toBe(6)
    expect(readFileSync(endRecordFile(dir, 0), 'utf8')).toBe(forged)
  })
})
