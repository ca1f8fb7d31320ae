/**
 * The settle window of `wait` (SPEC: the `wait` paragraph of Commands,
 * Completion batches): ends that come close together form one batch, `--any`
 * included, and `--settle 0` takes the first; with many Runs ending around
 * the window's edge and several waits collecting at once, every generation is
 * delivered exactly once. Each Run blocks reading its own FIFO, so the test
 * decides the instant it ends by writing that FIFO (no Run polls a file).
 */
import {spawn, spawnSync, type ChildProcess} from 'node:child_process'
import {existsSync, mkdirSync, readdirSync, readlinkSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {initialized, killRawServers, toolCall} from './mcp-raw.js'
import {actors, actorsAsync, BIN, cliEnv, homesPerTest, ROOT, waitFor, type CliResult} from './helpers.js'

const home = homesPerTest('actors-wait-settle-')

/** A Run that says it is ready (per generation), then ends when its gate (a FIFO) is written. */
const GATED =
  'touch "$GATES/$ACTORS_RUN.$ACTORS_GENERATION.ready"; read _ < "$GATES/$ACTORS_RUN"; echo "ended $ACTORS_RUN"'

function gatedRuns(h: string, names: string[]): string {
  const gates = join(h, 'gates')
  mkdirSync(gates, {recursive: true})
  for (const name of names) {
    expect(spawnSync('mkfifo', [join(gates, name)]).status).toBe(0)
    const r = actors(h, ['run', '--name', name, '--', 'sh', '-c', GATED], {env: {GATES: gates}})
    expect(r.code, r.stderr).toBe(0)
  }
  return gates
}

/** Wait until generation `gen` of each named Run is blocked at its gate. */
async function allReady(gates: string, names: string[], gen = 1): Promise<void> {
  await waitFor(() => names.every((n) => existsSync(join(gates, `${n}.${gen}.ready`))), 30_000, 'Runs at their gates')
}

/** End a gated Run now (its `read` is already waiting on the FIFO, so the write returns at once). */
function release(gates: string, name: string): void {
  writeFileSync(join(gates, name), 'go\n')
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** A `wait` started in the background; resolves with its result. */
function backgroundWait(h: string, args: string[]): {child: ChildProcess; done: Promise<CliResult>} {
  const child = spawn(process.execPath, [BIN, 'wait', ...args], {
    env: cliEnv(h),
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let stdout = ''
  let stderr = ''
  child.stdout!.on('data', (d) => (stdout += d))
  child.stderr!.on('data', (d) => (stderr += d))
  const done = new Promise<CliResult>((resolve) =>
    child.on('close', (code) => {
      let json: any
      try {
        json = JSON.parse(stdout)
      } catch {}
      resolve({code, stdout, stderr, json})
    }),
  )
  return {child, done}
}

/** The wait has looked once and sleeps on its doorbell (its fs.watch holds an inotify descriptor). */
async function sleepingOnBell(pid: number): Promise<void> {
  await waitFor(
    () => readdirSync(`/proc/${pid}/fd`).some((fd) => readlinkSync(`/proc/${pid}/fd/${fd}`).includes('inotify')),
    30_000,
    'the wait to sleep on its doorbell',
  )
}

/** Start a `wait --any --json` (with `extra`), release the three Runs 75 ms apart once it sleeps; its rows' runs. */
async function threeEnds(h: string, extra: string[]): Promise<string[]> {
  const names = ['t1', 't2', 't3']
  const gates = gatedRuns(h, names)
  await allReady(gates, names)
  const wait = backgroundWait(h, ['--any', '--json', '--timeout', '60s', ...extra])
  await sleepingOnBell(wait.child.pid!)
  for (const [i, name] of names.entries()) {
    if (i > 0) await sleep(75)
    release(gates, name)
  }
  const r = await wait.done
  expect(r.code, r.stderr).toBe(0)
  return r.json.rows.map((row: any) => row.run)
}

describe('wait: the settle window', () => {
  it('three Runs ending 75 ms apart come in one batch with the default window, --any included', async () => {
    const h = home()
    expect(await threeEnds(h, [])).toEqual(['t1', 't2', 't3'])
  })

  it('--settle 0 takes the first end alone: the three come in more than one batch', async () => {
    const h = home()
    const first = await threeEnds(h, ['--settle', '0'])
    expect(first.length).toBeLessThan(3)
    expect(first[0]).toBe('t1')
    const rest = actors(h, ['wait', '--json', '--timeout', '30s'])
    expect(rest.code, rest.stderr).toBe(0)
    expect([...first, ...rest.json.rows.map((row: any) => row.run)]).toEqual(['t1', 't2', 't3'])
  })

  it('a steady stream of ends cannot hold a batch back past five windows', async () => {
    const h = home()
    const names = Array.from({length: 16}, (_, i) => `s${String(i).padStart(2, '0')}`)
    const gates = gatedRuns(h, names)
    await allReady(gates, names)
    const wait = backgroundWait(h, ['--any', '--json', '--timeout', '60s'])
    await sleepingOnBell(wait.child.pid!)
    let first = 0
    let returned = 0
    void wait.done.then(() => (returned = Date.now()))
    // An end every 150 ms (inside the 200 ms window) for 2.25 s: each one would extend an unbounded window.
    for (const [i, name] of names.entries()) {
      if (i > 0) await sleep(150)
      release(gates, name)
      if (i === 0) first = Date.now()
    }
    const r = await wait.done
    expect(r.code, r.stderr).toBe(0)
    expect(r.json.rows.length).toBeLessThan(names.length)
    // Five windows after the first end, plus room for a loaded machine's wake-ups.
    expect(returned - first).toBeLessThan(1800)
    const rest = actors(h, ['wait', '--json', '--timeout', '30s'])
    expect([...r.json.rows, ...rest.json.rows].map((row: any) => row.run)).toEqual(names)
  })

  it("the MCP wait tool's settle widens the window: two ends 600 ms apart in one batch", async () => {
    const h = home()
    const names = ['w1', 'w2']
    const gates = gatedRuns(h, names)
    await allReady(gates, names)
    const mcp = await initialized(h, ['--owner', 'default'])
    mcp.send(toolCall(7, 'wait', {any: true, settle: '2s', timeout: '60s'}))
    await sleepingOnBell(mcp.server.pid!)
    release(gates, 'w1')
    await sleep(600)
    release(gates, 'w2')
    const reply = await mcp.reply(7, 60_000)
    killRawServers()
    expect(reply.result.isError, JSON.stringify(reply.result)).toBeFalsy()
    expect(reply.result.structuredContent.rows.map((row: any) => row.run)).toEqual(names)
  })

  it('a bad --settle is a usage error naming the flag', () => {
    const r = actors(home(), ['wait', '--settle', 'soon', '--timeout', '0'])
    expect(r.code).toBe(2)
    expect(r.stderr).toContain('--settle')
  })
})

describe('wait: many Runs ending around the window edge, concurrent waits', () => {
  it('delivers every generation exactly once across all batches', {timeout: 240_000}, async () => {
    const h = home()
    const names = Array.from({length: 20}, (_, i) => `m${String(i).padStart(2, '0')}`)
    // Four of them run a second generation: they are released twice.
    const rerun = new Set(['m02', 'm07', 'm11', 'm16'])
    const gates = gatedRuns(h, names)
    await allReady(gates, names)
    const expected = names.length + rerun.size
    const seen: string[] = []
    let batches = 0
    let done = false
    const collector = async () => {
      while (!done) {
        const r = await actorsAsync(h, ['wait', '--any', '--json', '--timeout', '3s'])
        expect([0, 124], r.stderr).toContain(r.code)
        if (r.json.rows.length > 0) batches++
        // No row is hidden in overflow here: fewer than 64 Runs in all.
        expect(r.json.overflow).toBe(0)
        for (const row of r.json.rows) seen.push(`${row.run}@${row.run_instance_id}#${row.generation}`)
        if (seen.length >= expected) done = true
      }
    }
    const collectors = [collector(), collector(), collector()]
    // Gaps between ends just below, at and above the 200 ms window (and a few far apart or together).
    const gaps = [0, 180, 220, 75, 400, 10, 260, 150, 195, 205]
    for (const [i, name] of names.entries()) {
      await sleep(gaps[i % gaps.length])
      release(gates, name)
      if (rerun.has(name)) {
        await waitFor(() => actors(h, ['rerun', name], {env: {GATES: gates}}).code === 0, 30_000, `rerun ${name}`)
      }
    }
    await allReady(gates, [...rerun], 2)
    for (const name of rerun) {
      await sleep(120)
      release(gates, name)
    }
    await Promise.race([Promise.all(collectors), sleep(120_000).then(() => (done = true))])
    done = true
    await Promise.all(collectors)
    expect(new Set(seen).size, 'a generation delivered twice').toBe(seen.length)
    const missing = [...names.map((n) => `${n}#1`), ...[...rerun].map((n) => `${n}#2`)].filter(
      (g) => !seen.some((key) => key.replace(/@.*#/, '#') === g),
    )
    // On failure, say where each missing Run stands (status, generation) and what a wait finds now.
    const where = () => {
      const wanted = new Set(missing.map((g) => g.split('#')[0]))
      const runs = actors(h, ['inspect', '--json']).json.runs.filter((r: any) => wanted.has(r.run))
      const now = actors(h, ['wait', '--json', '--timeout', '0']).json
      const files = [...wanted].map((n) => [
        n,
        readdirSync(join(h, 'runs', n)),
        readdirSync(gates).filter((f) => f.startsWith(n)),
      ])
      return JSON.stringify({
        runs,
        files,
        now: {
          rows: now.rows.map((r: any) => [r.run, r.generation, r.status]),
          pending: now.pending,
          members: now.members,
          deferred: now.deferred,
        },
      })
    }
    expect(missing, missing.length > 0 ? `never delivered: ${where()}` : '').toEqual([])
    expect(seen.length).toBe(expected)
    const generations = seen.map((key) => key.replace(/@.*#/, '#')).sort()
    expect(generations).toEqual([...names.map((n) => `${n}#1`), ...[...rerun].map((n) => `${n}#2`)].sort())
    expect(batches).toBeLessThan(expected)
    const left = actors(h, ['wait', '--json', '--timeout', '0'])
    expect(left.json.rows).toEqual([])
  })
})
