/**
 * The file-state kernel against real temp directories: atomic writes, locks
 * between real processes, process identity, fail-closed reads, trace bounds.
 */
import {spawn, spawnSync} from 'node:child_process'
import {
  appendFileSync,
  chmodSync,
  closeSync,
  lstatSync,
  mkdirSync,
  openSync,
  readFileSync,
  readSync,
  readdirSync,
  readlinkSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs'
import {join} from 'node:path'
import {pathToFileURL} from 'node:url'
import {build} from 'esbuild'
import {afterAll, afterEach, beforeAll, beforeEach, describe, expect, it} from 'vitest'
import {Doorbell} from '../src/lib/base/bell/doorbell.js'
import {isoTime, randomHex, randomUuid} from '../src/lib/base/platform/builtins.js'
import {parseDuration} from '../src/lib/base/platform/duration.js'
import {isActorsError} from '../src/lib/base/platform/errors.js'
import {resolveRunRef, validateRunId} from '../src/lib/base/platform/home.js'
import {withLockSync} from '../src/lib/base/platform/file-lock.js'
import {isSameProcess, readProcessIdentity} from '../src/lib/base/platform/process-identity.js'
import {readJsonFile, readJsonLines, writeJsonAtomic} from '../src/lib/base/platform/state-files.js'
import {appendTraceEvent, readTraceTail} from '../src/lib/kernel/runs/trace.js'
import {nobodyRunsNode, ROOT, removeDir, tempDir} from './helpers.js'

let dir: string
// The project's own state-files module as an ES module bundle a plain `node` child can import.
let bundleDir: string
let stateFilesBundle: string
beforeAll(async () => {
  bundleDir = tempDir('actors-bundle-')
  stateFilesBundle = join(bundleDir, 'state-files.mjs')
  await build({
    entryPoints: [join(ROOT, 'src/lib/base/platform/state-files.ts')],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    outfile: stateFilesBundle,
    logLevel: 'warning',
  })
})
afterAll(() => removeDir(bundleDir))
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
      expect(
        exitCodeOf(() => validateRunId(bad)),
        bad,
      ).toBe(2)
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
    for (const bad of ['', 'abc', '-1s', '5 m', '1e9h'])
      expect(
        exitCodeOf(() => parseDuration(bad, '--timeout')),
        bad,
      ).toBe(2)
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
    for (const read of [
      () => readJsonFile(join(dir, 'run.json')),
      () => readJsonLines(join(dir, 'trace.jsonl')),
      () => readJsonFile(join(dir, 'result.json')),
    ]) {
      try {
        read()
        expect.unreachable()
      } catch (error) {
        expect(isActorsError(error)).toBe(true)
        expect((error as Error).message).toMatch(
          /(run\.json|trace\.jsonl|result\.json): is (a directory|not a regular file)/,
        )
      }
    }
  })

  // Root can read any file without its access time; another user cannot (EPERM), and still reads it. CI runs as root.
  // Skipped where user nobody cannot run this Node (installed under /root); the bundle is in a temp dir that user reads.
  it.runIf(nobodyRunsNode())(
    'reads state files without touching their access time, and as another user than their owner',
    () => {
      const file = join(dir, 'run.json')
      writeJsonAtomic(file, {schema: 's1', n: 1})
      const old = new Date('2026-01-01T00:00:00Z')
      utimesSync(file, old, statSync(file).mtime)
      expect(readJsonFile(file)).toEqual({schema: 's1', n: 1})
      expect(statSync(file).atime.getTime()).toBe(old.getTime())
      // Both temporary dirs are made 0700, and state files 0600; let that user in.
      chmodSync(file, 0o644)
      chmodSync(dir, 0o755)
      chmodSync(bundleDir, 0o755)
      const asNobody = (code: string) =>
        spawnSync(process.execPath, ['--input-type=module', '-e', code], {uid: 65534, gid: 65534, encoding: 'utf8'})
      // The plain open that fails for that user (so the fallback below is what reads the file)...
      const refused = asNobody(
        `import {openSync, constants} from 'node:fs'; try { openSync(${JSON.stringify(file)}, constants.O_RDONLY | constants.O_NOATIME) } catch (e) { console.log(e.code) }`,
      )
      expect(refused.stdout.trim()).toBe('EPERM')
      // ...and the state-file reader, which falls back to a plain read for the rest of the process.
      const read = asNobody(
        `import {readJsonFile} from ${JSON.stringify(pathToFileURL(stateFilesBundle).href)}; console.log(JSON.stringify([readJsonFile(${JSON.stringify(file)}), readJsonFile(${JSON.stringify(file)})]))`,
      )
      expect(read.stderr).toBe('')
      expect(JSON.parse(read.stdout)).toEqual([
        {schema: 's1', n: 1},
        {schema: 's1', n: 1},
      ])
    },
  )

  it("never shows a reader half a file while the project's own atomic writer rewrites it from another process", async () => {
    const file = join(dir, 'hot.json')
    const stop = join(dir, 'stop')
    writeJsonAtomic(file, {n: 0, pad: 'x'.repeat(200_000)})
    // A tight loop of writeJsonAtomic (src/lib/base/platform/state-files.ts, bundled in beforeAll) in a child process while we read.
    const child = spawn(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `
      import {writeJsonAtomic} from ${JSON.stringify(pathToFileURL(stateFilesBundle).href)};
      import fs from 'node:fs';
      const pad = 'x'.repeat(200000);
      const deadline = Date.now() + 60000;
      for (let n = 1; !fs.existsSync(${JSON.stringify(stop)}) && Date.now() < deadline; n++) writeJsonAtomic(${JSON.stringify(file)}, {n, pad});
    `,
      ],
      {stdio: ['ignore', 'ignore', 'pipe']},
    )
    let stderr = ''
    child.stderr.on('data', (chunk) => (stderr += chunk))
    const exited = new Promise<number | null>((r) => child.on('exit', r))
    const seen = new Set<number>()
    try {
      // Read until we have seen many distinct versions: reads and rewrites did interleave.
      const deadline = Date.now() + 45_000
      while (seen.size < 150 && Date.now() < deadline && child.exitCode === null) {
        const value = readJsonFile<{n: number; pad: string}>(file)
        expect(typeof value?.n).toBe('number')
        expect(value!.pad.length).toBe(200_000)
        seen.add(value!.n)
        await new Promise((r) => setImmediate(r))
      }
    } finally {
      writeFileSync(stop, '')
    }
    expect(await exited, stderr).toBe(0)
    expect(seen.size).toBeGreaterThanOrEqual(150)
    // Every temp file was renamed into place: nothing but the file and the stop marker is left.
    expect(readdirSync(dir).sort()).toEqual(['hot.json', 'stop'])
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

describe('lock files', () => {
  it('are symbolic links naming the holder; one left by a dead process is broken', () => {
    const lock = join(dir, 'link.lock')
    const seen = withLockSync(lock, () => JSON.parse(readlinkSync(lock)))
    expect(seen).toMatchObject({pid: process.pid})
    expect(lstatSync(lock, {throwIfNoEntry: false})).toBeUndefined()
    const dead = spawnSync(process.execPath, ['-e', 'console.log(process.pid)'], {encoding: 'utf8'})
    symlinkSync(JSON.stringify({pid: Number(dead.stdout.trim()), start: '1'}), lock)
    const started = Date.now()
    expect(withLockSync(lock, () => 7, {timeoutMs: 2000})).toBe(7)
    expect(Date.now() - started).toBeLessThan(1500)
    // A link whose target is not an identity (planted, or damaged) is removed after a second, like a torn lock file.
    symlinkSync('not an identity', lock)
    expect(withLockSync(lock, () => 8, {timeoutMs: 5000})).toBe(8)
  })
})

describe('doorbell', () => {
  it('watches only from its first next(), which returns at once, then rings on a change in the directory', async () => {
    const bell = new Doorbell(dir, 60_000)
    try {
      // No watch yet, so nothing could have rung: the first call arms it and asks the caller to look again.
      const started = Date.now()
      await bell.next(Date.now() + 30_000)
      expect(Date.now() - started).toBeLessThan(1000)
      bell.clear()
      // Watched now: a change rings it long before the 30 s deadline and the 60 s safety poll.
      setTimeout(() => writeFileSync(join(dir, 'changed'), 'x'), 200)
      const waiting = Date.now()
      await bell.next(Date.now() + 30_000)
      expect(Date.now() - waiting).toBeGreaterThanOrEqual(150)
      expect(Date.now() - waiting).toBeLessThan(10_000)
    } finally {
      bell.close()
    }
  })

  it('wakes its sleeper outside the watch callback: a watch closed by the woken code is gone at once', async () => {
    // Closed inside libuv's read of the inotify events, a watch stays until that read returns; a `wait` that went on
    // to exit from there left the kernel a live watch to tear down, 10-20 ms after it had printed.
    const bell = new Doorbell(dir, 60_000)
    await bell.next() // arms the watch
    setTimeout(() => writeFileSync(join(dir, 'changed'), 'x'), 50)
    await bell.next(Date.now() + 30_000)
    bell.close()
    const inode = statSync(dir).ino.toString(16)
    const watching = readdirSync('/proc/self/fdinfo').filter((fd) => {
      try {
        return readFileSync(`/proc/self/fdinfo/${fd}`, 'utf8')
          .split('\n')
          .some((line) => line.startsWith('inotify ') && line.includes(` ino:${inode} `))
      } catch {
        return false
      }
    })
    expect(watching).toEqual([])
  })
})

describe('isoTime', () => {
  it('formats exactly as toISOString', () => {
    const samples = [
      0,
      1,
      999,
      Date.parse('2026-12-31T23:59:59.999Z'),
      Date.parse('2000-02-29T12:00:00.050Z'),
      Date.now(),
      Date.parse('0005-01-01T00:00:00Z'),
      Date.parse('9999-12-31T23:59:59.999Z'),
    ]
    for (let i = 0; i < 500; i++) samples.push(Math.floor(Math.random() * 4e12))
    for (const ms of samples) expect(isoTime(new Date(ms))).toBe(new Date(ms).toISOString())
    // Outside 0-9999 it is toISOString's own (expanded-year) text.
    expect(isoTime(new Date(Date.UTC(10000, 0, 1)))).toBe(new Date(Date.UTC(10000, 0, 1)).toISOString())
    expect(isoTime()).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
  })
})

describe('random ids', () => {
  it('makes version 4 UUIDs and hex of the asked length, never repeating', () => {
    const uuids = Array.from({length: 2000}, randomUuid)
    for (const uuid of uuids)
      expect(uuid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
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
  // The bounds are SPEC's literal values, not the constants of trace.ts: a changed constant must fail here.
  const SPEC_MAX_EVENTS = 2048
  const SPEC_MAX_BYTES = 4 * 1024 * 1024
  /** The first line of a file (a Trace event is under 64 KiB). */
  const firstLine = (file: string) => {
    const fd = openSync(file, 'r')
    try {
      const buffer = Buffer.alloc(64 * 1024)
      const text = buffer.subarray(0, readSync(fd, buffer, 0, buffer.length, 0)).toString('utf8')
      return text.slice(0, text.indexOf('\n'))
    } finally {
      closeSync(fd)
    }
  }
  const traceLines = (runDir: string) => readJsonLines<{kind: string; summary?: string}>(join(runDir, 'trace.jsonl'))

  it('validates kinds and compacts with a marker once it holds more than 2048 events', () => {
    mkdirSync(join(dir, 'run'))
    const runDir = join(dir, 'run')
    expect(exitCodeOf(() => appendTraceEvent(runDir, {kind: 'Bad Kind'}))).toBe(2)
    expect(exitCodeOf(() => appendTraceEvent(runDir, {kind: 'x', data: 'y'.repeat(70_000)}))).toBe(2)
    const append = (i: number) =>
      appendTraceEvent(runDir, {kind: 'step.done', summary: `step ${i}`, data: {i, pad: 'p'.repeat(40)}})
    // Seed 2047 events as the file itself (appending each through the lock would take a minute on a busy
    // machine), then append the 2048th for real.
    const seeded = Array.from({length: SPEC_MAX_EVENTS - 1}, (_, i) =>
      JSON.stringify({
        id: randomUuid(),
        ts: new Date().toISOString(),
        kind: 'step.done',
        summary: `step ${i}`,
        data: {i, pad: 'p'.repeat(40)},
      }),
    )
    writeFileSync(join(runDir, 'trace.jsonl'), seeded.join('\n') + '\n')
    append(SPEC_MAX_EVENTS - 1)
    // Exactly at the bound: nothing dropped yet.
    const full = traceLines(runDir)
    expect(full.records.length).toBe(SPEC_MAX_EVENTS)
    expect(full.records.some((r) => r.kind === 'runtime.trace_compacted')).toBe(false)
    // One more crosses it: the oldest half goes, replaced by the marker.
    append(SPEC_MAX_EVENTS)
    const compacted = traceLines(runDir)
    expect(compacted.records[0]).toMatchObject({kind: 'runtime.trace_compacted'})
    expect(compacted.records.length).toBeLessThanOrEqual(SPEC_MAX_EVENTS / 2 + 1)
    for (let i = SPEC_MAX_EVENTS + 1; i < SPEC_MAX_EVENTS + 200; i++) append(i)
    const {records, damaged} = traceLines(runDir)
    expect(damaged).toBe(0)
    expect(records.length).toBeLessThanOrEqual(SPEC_MAX_EVENTS)
    expect(readTraceTail(runDir, 1)[0].summary).toBe(`step ${SPEC_MAX_EVENTS + 199}`)
  })

  it('reads the last events of a Trace from its end, through windows, as a whole read would give them', () => {
    mkdirSync(join(dir, 'run'))
    const runDir = join(dir, 'run')
    const file = join(runDir, 'trace.jsonl')
    const line = (i: number, pad: number) =>
      JSON.stringify({
        id: randomUuid(),
        ts: new Date().toISOString(),
        kind: 'step.done',
        summary: `step ${i} é`,
        data: {pad: 'p'.repeat(pad)},
      })
    const whole = (count: number) => traceLines(runDir).records.slice(-count)
    // Small (one read from the start), just over the first window, several windows, events of 60 KiB each,
    // a damaged line among the last ones, and a window boundary inside a multi-byte character.
    for (const [events, pad] of [
      [5, 40],
      [400, 200],
      [3000, 1000],
      [70, 60_000],
    ] as const) {
      const lines = Array.from({length: events}, (_, i) => line(i, pad))
      lines.splice(events - 3, 0, '{"torn": ')
      writeFileSync(file, lines.join('\n') + '\n')
      for (const count of [1, 20, 64]) expect(readTraceTail(runDir, count)).toEqual(whole(count))
    }
    writeFileSync(file, '')
    expect(readTraceTail(runDir, 64)).toEqual([])
    // Over the bound (a Run appends to its own Trace): only its end is read, at most 16 MiB of it.
    writeFileSync(file, `${'x'.repeat(16 * 1024 * 1024 + 1)}\n${line(1, 10)}\n`)
    expect(readTraceTail(runDir, 5).map((e) => [e.kind, e.summary])).toEqual([['step.done', 'step 1 é']])
    // Not a file: fails closed, naming it.
    removeDir(file)
    mkdirSync(file)
    expect(() => readTraceTail(runDir, 1)).toThrow(`${file}: is a directory, not a file`)
  })

  it('keeps the event count beside a large journal, and recounts one changed behind its back', () => {
    mkdirSync(join(dir, 'run'))
    const runDir = join(dir, 'run')
    const file = join(runDir, 'trace.jsonl')
    const line = (i: number) =>
      JSON.stringify({
        id: randomUuid(),
        ts: new Date().toISOString(),
        kind: 'step.done',
        summary: `step ${i}`,
        data: {i, pad: 'p'.repeat(40)},
      })
    const append = (i: number) =>
      appendTraceEvent(runDir, {kind: 'step.done', summary: `step ${i}`, data: {i, pad: 'p'.repeat(40)}})
    const counted = () => readJsonFile<{events: number}>(join(runDir, '.trace.count'))?.events
    writeFileSync(file, Array.from({length: SPEC_MAX_EVENTS - 10}, (_, i) => line(i)).join('\n') + '\n')
    // The first append past the small-journal threshold counts once; later ones add one each.
    append(SPEC_MAX_EVENTS - 10)
    expect(counted()).toBe(SPEC_MAX_EVENTS - 9)
    append(SPEC_MAX_EVENTS - 9)
    expect(counted()).toBe(SPEC_MAX_EVENTS - 8)
    // Seven events written behind the kernel's back: the next append recounts, lands exactly on the bound...
    appendFileSync(file, Array.from({length: 7}, (_, i) => line(SPEC_MAX_EVENTS - 8 + i)).join('\n') + '\n')
    append(SPEC_MAX_EVENTS - 1)
    expect(traceLines(runDir).records.length).toBe(SPEC_MAX_EVENTS)
    expect(counted()).toBe(SPEC_MAX_EVENTS)
    expect(firstLine(file)).not.toContain('runtime.trace_compacted')
    // ...and the one after crosses it, whatever the count file said before.
    append(SPEC_MAX_EVENTS)
    expect(firstLine(file)).toContain('"kind":"runtime.trace_compacted"')
    expect(counted()).toBe(traceLines(runDir).records.length)
    // A damaged count file is a recount, never an error.
    writeFileSync(join(runDir, '.trace.count'), '{torn')
    append(SPEC_MAX_EVENTS + 1)
    expect(traceLines(runDir).records.at(-1)?.summary).toBe(`step ${SPEC_MAX_EVENTS + 1}`)
  })

  it('compacts on bytes first: ~60 KiB events cross 4 MiB long before 2048 events', () => {
    mkdirSync(join(dir, 'run'))
    const runDir = join(dir, 'run')
    const file = join(runDir, 'trace.jsonl')
    const pad = 'b'.repeat(60 * 1024)
    let written = 0
    let compactedAt: number | undefined
    // 4 MiB holds 68 of these events: the 69th must compact.
    for (let i = 0; i < 75; i++) {
      const event = appendTraceEvent(runDir, {kind: 'big.step', summary: `big ${i}`, data: {pad}})
      written += Buffer.byteLength(JSON.stringify(event)) + 1
      const size = statSync(file).size
      expect(size, `after event ${i}`).toBeLessThanOrEqual(SPEC_MAX_BYTES)
      if (firstLine(file).includes('"kind":"runtime.trace_compacted"')) {
        // The first compaction comes with the event that took the journal past 4 MiB, not earlier.
        if (compactedAt === undefined) expect(written, `first compaction at event ${i}`).toBeGreaterThan(SPEC_MAX_BYTES)
        compactedAt ??= i
      } else {
        expect(written, `no compaction by event ${i}`).toBeLessThanOrEqual(SPEC_MAX_BYTES)
      }
    }
    expect(compactedAt).toBeDefined()
    expect(readTraceTail(runDir, 1)[0].summary).toBe('big 74')
  })
})
