/**
 * The file-state kernel against real temp directories: atomic writes, locks
 * between real processes, process identity, fail-closed reads, trace bounds.
 */
import {spawn, spawnSync} from 'node:child_process'
import {readFileSync, readdirSync, writeFileSync, mkdirSync} from 'node:fs'
import {join} from 'node:path'
import {afterEach, beforeEach, describe, expect, it} from 'vitest'
import {randomHex, randomUuid} from '../src/lib/builtins.js'
import {parseDuration} from '../src/lib/duration.js'
import {isActorsError} from '../src/lib/errors.js'
import {resolveRunRef, validateRunId} from '../src/lib/home.js'
import {withLockSync} from '../src/lib/lock.js'
import {isSameProcess, readProcessIdentity} from '../src/lib/process-identity.js'
import {readJsonFile, readJsonLines, writeJsonAtomic} from '../src/lib/state-files.js'
import {appendTraceEvent, MAX_TRACE_EVENTS, readTraceTail} from '../src/lib/trace.js'
import {removeDir, tempDir} from './helpers.js'

let dir: string
beforeEach(() => {
  dir = tempDir()
})
afterEach(() => removeDir(dir))

function exitCodeOf(fn: () => unknown): number | undefined {
  try {
    fn()
  } catch (error) {
    return isActorsError(error) ? error.exitCode : -1
  }
  return undefined
}

describe('run ids', () => {
  it('accepts plain names and refuses anything that could escape the state root', () => {
    expect(validateRunId('build-1.a_b')).toBe('build-1.a_b')
    for (const bad of ['', '.', '..', '../x', 'a/b', 'a b', 'x;rm -rf', '$(id)', 'é', 'a'.repeat(129), 'a\nb']) {
      expect(exitCodeOf(() => validateRunId(bad)), bad).toBe(2)
    }
  })

  it('accepts a state dir path only when it sits directly under runs/', () => {
    const home = join(dir, 'home')
    mkdirSync(join(home, 'runs', 'r1'), {recursive: true})
    expect(resolveRunRef(home, join(home, 'runs', 'r1'))).toBe('r1')
    expect(resolveRunRef(home, join(home, 'runs', 'r1') + '/')).toBe('r1')
    expect(exitCodeOf(() => resolveRunRef(home, '/etc/passwd'))).toBe(2)
    expect(exitCodeOf(() => resolveRunRef(home, join(home, 'runs', 'r1', '..', '..')))).toBe(2)
  })
})

describe('durations', () => {
  it('parses units and bare seconds, refusing garbage with exit 2', () => {
    expect(parseDuration('500ms', 'x')).toBe(500)
    expect(parseDuration('30s', 'x')).toBe(30_000)
    expect(parseDuration('5m', 'x')).toBe(300_000)
    expect(parseDuration('1h', 'x')).toBe(3_600_000)
    expect(parseDuration('2', 'x')).toBe(2000)
    expect(parseDuration('1.5', 'x')).toBe(1500)
    for (const bad of ['', 'abc', '-1s', '5 m', '1e9h']) expect(exitCodeOf(() => parseDuration(bad, '--timeout')), bad).toBe(2)
  })
})

describe('state files', () => {
  it('writes JSON atomically and reads it back', () => {
    const file = join(dir, 'a.json')
    writeJsonAtomic(file, {schema: 's1', n: 1})
    expect(readJsonFile(file, {schema: 's1'})).toEqual({schema: 's1', n: 1})
    expect(readdirSync(dir)).toEqual(['a.json'])
  })

  it('fails closed on corrupt, oversized, non-object and foreign-schema files, naming the file', () => {
    const cases: Array<[string, string, object]> = [
      ['corrupt.json', '{"half": ', {}],
      ['array.json', '[1,2]', {}],
      ['foreign.json', '{"schema":"other-v9"}', {schema: 'actors-run-v1'}],
      ['big.json', JSON.stringify({x: 'y'.repeat(2000)}), {maxBytes: 1000}],
    ]
    for (const [name, text, options] of cases) {
      const file = join(dir, name)
      writeFileSync(file, text)
      try {
        readJsonFile(file, options)
        expect.unreachable(name)
      } catch (error) {
        expect(isActorsError(error), name).toBe(true)
        expect((error as Error).message).toContain(file)
      }
    }
    expect(readJsonFile(join(dir, 'missing.json'))).toBeUndefined()
  })

  it('fails closed, naming the file, when a directory sits where a state file belongs', () => {
    mkdirSync(join(dir, 'run.json'))
    mkdirSync(join(dir, 'trace.jsonl'))
    spawnSync('mkfifo', [join(dir, 'result.json')])
    for (const read of [() => readJsonFile(join(dir, 'run.json')), () => readJsonLines(join(dir, 'trace.jsonl')), () => readJsonFile(join(dir, 'result.json'))]) {
      try {
        read()
        expect.unreachable()
      } catch (error) {
        expect(isActorsError(error)).toBe(true)
        expect((error as Error).message).toMatch(/(run\.json|trace\.jsonl|result\.json): is (a directory|not a regular file)/)
      }
    }
  })

  it('never shows a reader half a file while a writer rewrites it', async () => {
    const file = join(dir, 'hot.json')
    writeJsonAtomic(file, {n: 0, pad: 'x'.repeat(100_000)})
    // A tight loop of rename-based rewrites in a child process while we read.
    const child = spawn(process.execPath, ['-e', `
      const fs = require('fs'); const path = require('path');
      const file = ${JSON.stringify(file)};
      for (let i = 1; i <= 300; i++) {
        const tmp = file + '.' + i + '.tmp';
        fs.writeFileSync(tmp, JSON.stringify({n: i, pad: 'x'.repeat(100000)}));
        fs.renameSync(tmp, file);
      }
    `])
    let reads = 0
    const done = new Promise((r) => child.on('exit', r))
    let finished = false
    void done.then(() => (finished = true))
    while (!finished) {
      const value = readJsonFile<{n: number}>(file)
      expect(typeof value?.n).toBe('number')
      reads++
      await new Promise((r) => setImmediate(r))
    }
    expect(reads).toBeGreaterThan(0)
  })
})

describe('locks', () => {
  it('serialises real processes: concurrent read-modify-write loses no increment', async () => {
    const counter = join(dir, 'counter.json')
    writeJsonAtomic(counter, {n: 0})
    // Two child processes speak the same lock-file protocol (exclusive create, write, unlink);
    // this process uses withLockSync. Each side increments 40 times. A lock broken while
    // held shows up as a lost increment or a worker failing to unlink its own lock.
    const worker = `
      const fs = require('fs');
      const lock = ${JSON.stringify(join(dir, 'counter.lock'))};
      const file = ${JSON.stringify(counter)};
      const sleeper = new Int32Array(new SharedArrayBuffer(4));
      const stat = fs.readFileSync('/proc/self/stat', 'utf8');
      const start = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
      const boot = fs.readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
      const me = JSON.stringify({pid: process.pid, start, boot});
      for (let i = 0; i < 40; i++) {
        let fd;
        for (;;) { try { fd = fs.openSync(lock, 'wx'); break } catch { Atomics.wait(sleeper, 0, 0, 1) } }
        // Hold the lock file empty for a moment: waiters must not take a fresh, half-written lock for an abandoned one.
        Atomics.wait(sleeper, 0, 0, 10);
        fs.writeSync(fd, me); fs.closeSync(fd);
        const n = JSON.parse(fs.readFileSync(file, 'utf8')).n;
        fs.writeFileSync(file + '.tmp' + process.pid, JSON.stringify({n: n + 1}));
        fs.renameSync(file + '.tmp' + process.pid, file);
        fs.unlinkSync(lock);
      }`
    // Listen for the exits at once: a fast child may end while this loop still runs.
    const exits = [0, 1].map(() => {
      const child = spawn(process.execPath, ['-e', worker], {timeout: 30_000})
      return new Promise((resolve) => child.on('exit', resolve))
    })
    for (let i = 0; i < 40; i++) {
      withLockSync(join(dir, 'counter.lock'), () => {
        const n = readJsonFile<{n: number}>(counter)!.n
        writeJsonAtomic(counter, {n: n + 1})
      })
      await new Promise((r) => setImmediate(r))
    }
    const codes = await Promise.all(exits)
    expect(codes).toEqual([0, 0])
    expect(readJsonFile<{n: number}>(counter)!.n).toBe(120)
  })

  it('breaks a lock left behind by a dead process', () => {
    const lock = join(dir, 'stale.lock')
    const dead = spawnSync(process.execPath, ['-e', 'console.log(process.pid)'], {encoding: 'utf8'})
    writeFileSync(lock, JSON.stringify({pid: Number(dead.stdout.trim()), start: '1'}))
    const started = Date.now()
    expect(withLockSync(lock, () => 42, {timeoutMs: 2000})).toBe(42)
    expect(Date.now() - started).toBeLessThan(1500)
  })
})

describe('random ids', () => {
  it('makes version 4 UUIDs and hex of the asked length, never repeating', () => {
    const uuids = Array.from({length: 2000}, randomUuid)
    for (const uuid of uuids) expect(uuid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
    expect(new Set(uuids).size).toBe(uuids.length)
    expect(randomHex(3)).toMatch(/^[0-9a-f]{6}$/)
    // Every hex digit shows up: the bytes are not a constant or a short cycle.
    expect(new Set(Array.from({length: 200}, () => randomHex(4)).join('')).size).toBe(16)
  })
})

describe('process identity', () => {
  it('tells a live process from a recycled pid', async () => {
    const child = spawn('sleep', ['30'])
    const identity = readProcessIdentity(child.pid!)!
    expect(identity.pid).toBe(child.pid)
    expect(isSameProcess(identity)).toBe(true)
    expect(isSameProcess({...identity, start: String(Number(identity.start) + 1)})).toBe(false)
    child.kill('SIGKILL')
    await new Promise((r) => child.on('exit', r))
    expect(isSameProcess(identity)).toBe(false)
  })
})

describe('trace', () => {
  it('validates kinds and stays bounded, compacting with a marker', () => {
    mkdirSync(join(dir, 'run'))
    const runDir = join(dir, 'run')
    expect(exitCodeOf(() => appendTraceEvent(runDir, {kind: 'Bad Kind'}))).toBe(2)
    expect(exitCodeOf(() => appendTraceEvent(runDir, {kind: 'x', data: 'y'.repeat(70_000)}))).toBe(2)
    for (let i = 0; i < MAX_TRACE_EVENTS + 300; i++) appendTraceEvent(runDir, {kind: 'step.done', summary: `step ${i}`, data: {i, pad: 'p'.repeat(40)}})
    const {records, damaged} = readJsonLines<{kind: string; summary?: string}>(join(runDir, 'trace.jsonl'))
    expect(damaged).toBe(0)
    expect(records.length).toBeLessThanOrEqual(MAX_TRACE_EVENTS)
    expect(records.some((r) => r.kind === 'runtime.trace_compacted')).toBe(true)
    expect(readTraceTail(runDir, 1)[0].summary).toBe(`step ${MAX_TRACE_EVENTS + 299}`)
    expect(readFileSync(join(runDir, 'trace.jsonl')).length).toBeLessThanOrEqual(4 * 1024 * 1024)
  })
})
