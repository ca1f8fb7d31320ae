/**
 * Terminal views, layer 2: without a TTY every command prints plain text
 * (no escape codes) and never loads ink or react, proved by an ESM resolve
 * hook that records every specifier the CLI imports.
 */
import {spawn} from 'node:child_process'
import {readFileSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {afterEach, beforeEach, describe, expect, it} from 'vitest'
import {BIN, ROOT, actors, cliEnv, tempDir, waitFor, waitForResult, writeTone, removeHome} from './helpers.js'
import {loadedHeavyModules, writeLoadTracer} from './views-support.js'

const ESC = /\u001B/

let home: string
beforeEach(() => {
  home = tempDir()
})
afterEach(() => removeHome(home))

describe('plain output without a TTY', () => {
  it('inspect, logs and run --follow print no escape codes (even with colour-friendly TERM) and never load ink or react', () => {
    const trace = join(home, 'trace.txt')
    writeFileSync(trace, '')
    const env = {
      TRACE_FILE: trace,
      NODE_OPTIONS: `--require ${writeLoadTracer(home)}`,
      TERM: 'xterm-256color',
      NO_COLOR: '',
    }
    const follow = actors(
      home,
      ['run', '--name', 'f1', '--follow', '--', 'sh', '-c', 'echo out-line; echo err-line >&2; exit 3'],
      {env},
    )
    expect(follow.code).toBe(1)
    expect(follow.stdout).toBe('out-line\n')
    expect(follow.stderr).toContain('err-line\n')
    expect(follow.stderr).toContain('f1 failed (exit 3)')
    const logs = actors(home, ['logs', 'f1', '--follow'], {env})
    expect(logs.stdout).toBe('out-line\n')
    const table = actors(home, ['inspect'], {env})
    expect(table.code).toBe(0)
    expect(table.stdout).toMatch(
      /^RUN\s+RECIPE\s+STATUS\s+EXIT\s+STARTED\s+DURATION\s+CPU\s+MEM\s+COMMAND\s+PARENT\nf1\s+-\s+failed\s+3\s/,
    )
    for (const out of [follow.stdout, follow.stderr, logs.stdout, logs.stderr, table.stdout, table.stderr])
      expect(out).not.toMatch(ESC)
    const specifiers = readFileSync(trace, 'utf8').split('\n').filter(Boolean)
    // The tracer saw the CLI load modules (so an empty list is not a false pass; the
    // tmux test shows the same tracer catching ink on a TTY)...
    expect(specifiers.some((s) => s.startsWith('require node:fs'))).toBe(true)
    // ...and nothing of ink or react.
    expect(loadedHeavyModules(specifiers)).toEqual([])
  })

  it("one Run's huge argv does not pad every row of a piped inspect; --json keeps it whole", () => {
    const huge = Array.from({length: 2}, (_, i) => `${i}`.repeat(100_000))
    for (const [name, argv] of [
      ['s1', ['true']],
      ['big', ['sh', '-c', 'true', ...huge]],
      ['s2', ['true']],
    ] as const) {
      const r = actors(home, ['run', '--name', name, '--wait', '--', ...argv])
      expect(r.code, r.stderr).toBe(0)
    }
    const table = actors(home, ['inspect'])
    expect(table.code, table.stderr).toBe(0)
    const lines = table.stdout.trimEnd().split('\n')
    expect(lines).toHaveLength(4)
    // 200 KB of argv padded into each of 4 lines was 800 KB.
    expect(table.stdout.length).toBeLessThan(2_000)
    const big = lines.find((l) => l.startsWith('big '))!
    expect(big).toMatch(/sh -c true 0{100,}…/)
    for (const line of lines.filter((l) => /^s[12] /.test(l))) expect(line.length).toBeLessThan(400)
    const json = actors(home, ['inspect', 'big', '--json'])
    expect(json.json.meta.argv).toEqual(['sh', '-c', 'true', ...huge])
  })

  it('a piped inspect --watch (and --tree --watch) ends soon after its reader, with nothing changing', async () => {
    actors(home, ['run', '--name', 'idle', '--', 'sleep', '60'])
    for (const args of [
      ['inspect', '--watch'],
      ['inspect', '--tree', '--watch'],
    ]) {
      const started = Date.now()
      const line = await new Promise<{code: number | null; out: string}>((resolve) => {
        const child = spawn('sh', ['-c', `"${process.execPath}" "${BIN}" ${args.join(' ')} | head -1`], {
          env: cliEnv(home),
        })
        let out = ''
        child.stdout.on('data', (d) => {
          out += d
        })
        child.on('close', (code) => resolve({code, out}))
      })
      expect(line.out, args.join(' ')).toMatch(/RUN|idle/)
      // The Run changes nothing meanwhile: only the reader's going can end the watch (a second, plus a start).
      expect(Date.now() - started, args.join(' ')).toBeLessThan(8_000)
      expect(line.code).toBe(0)
    }
    actors(home, ['control', 'idle', 'kill'])
  })

  it('inspect --watch without a TTY prints the table once per change and ends cleanly on SIGINT', async () => {
    const trace = join(home, 'trace.txt')
    writeFileSync(trace, '')
    actors(home, ['run', '--name', 'first', '--', 'true'])
    await waitForResult(join(home, 'runs', 'first'))
    const child = spawn(process.execPath, [BIN, 'inspect', '--watch'], {
      cwd: ROOT,
      env: cliEnv(home, {
        TRACE_FILE: trace,
        NODE_OPTIONS: `--require ${writeLoadTracer(home)}`,
        CI: '',
        TERM: 'xterm-256color',
        NO_COLOR: '',
      }),
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stdout = ''
    child.stdout.on('data', (d) => (stdout += d))
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve))
    await waitFor(() => stdout.includes('first'), 10_000, 'the first table')
    actors(home, ['run', '--name', 'second', '--', 'sleep', '0.3'])
    await waitFor(() => /second\s+-\s+done/.test(stdout), 10_000, 'second to show as done')
    child.kill('SIGINT')
    expect(await exited).toBe(0)
    expect(stdout).not.toMatch(ESC)
    const tables = stdout.split('\n\n')
    expect(tables[0]).toMatch(/^RUN\s+RECIPE/)
    expect(tables[0]).toContain('first')
    expect(tables[0]).not.toContain('second')
    // Each table is one complete listing; the last shows both Runs finished.
    expect(tables.at(-1)).toMatch(/first\s+-\s+done[\s\S]*second\s+-\s+done/)
    // One table per change (launch, running, done), not one per second.
    expect(tables.length).toBeGreaterThanOrEqual(2)
    expect(tables.length).toBeLessThanOrEqual(5)
    expect(loadedHeavyModules(readFileSync(trace, 'utf8').split('\n'))).toEqual([])
  })

  it('inspect --watch --json prints one NDJSON snapshot per change', async () => {
    const child = spawn(process.execPath, [BIN, 'inspect', '--watch', '--json'], {
      cwd: ROOT,
      env: cliEnv(home),
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stdout = ''
    child.stdout.on('data', (d) => (stdout += d))
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve))
    await waitFor(() => stdout.includes('\n'), 10_000, 'the first snapshot')
    actors(home, ['run', '--name', 'j1', '--', 'true'])
    await waitFor(() => stdout.includes('"status":"done"'), 10_000, 'j1 done')
    child.kill('SIGTERM')
    expect(await exited).toBe(0)
    const docs = stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line))
    expect(docs[0]).toMatchObject({type: 'snapshot', runs: [], damaged: []})
    expect(docs.at(-1).runs[0]).toMatchObject({run: 'j1', status: 'done'})
  })

  it('wait and music play print plain text without a TTY and never load ink or react', () => {
    const trace = join(home, 'trace.txt')
    writeFileSync(trace, '')
    const env = {
      TRACE_FILE: trace,
      NODE_OPTIONS: `--require ${writeLoadTracer(home)}`,
      TERM: 'xterm-256color',
      NO_COLOR: '',
    }
    actors(home, ['run', '--name', 'w1', '--', 'sh', '-c', 'exit 4'])
    const wait = actors(home, ['wait'], {env})
    expect(wait.code).toBe(1)
    expect(wait.stdout).toMatch(/^1 Run: 1 failed/)
    expect(wait.stdout).toMatch(/w1\s+failed/)
    const wav = join(home, 'short.wav')
    writeTone(wav, 1, 440, {rate: 8000, channels: 1})
    const play = actors(home, ['music', 'play', wav, '--no-loop', '--player', 'mpv'], {
      env: {...env, ACTORS_MUSIC_OUTPUT: 'null'},
    })
    expect(play.code).toBe(0)
    expect(play.stdout).toBe(`1/1 ${wav}\n`)
    for (const out of [wait.stdout, wait.stderr, play.stdout, play.stderr]) expect(out).not.toMatch(ESC)
    const specifiers = readFileSync(trace, 'utf8').split('\n')
    expect(specifiers.some((s) => s.startsWith('require node:fs'))).toBe(true)
    expect(loadedHeavyModules(specifiers)).toEqual([])
  })
})
