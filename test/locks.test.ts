/**
 * Resource locks (SPEC: Resource locks) with real processes: Runs that take
 * turns, shells and named holders that queue, die and let leases run out,
 * and damaged lock files that fail closed.
 */
import {spawn, spawnSync, type ChildProcess} from 'node:child_process'
import {existsSync, mkdirSync, readFileSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'
import {releaseLocks, takeLocks} from '../src/lib/kernel/locks/core.js'
import {MAX_JOURNAL_RECORDS} from '../src/lib/kernel/locks/journal.js'
import {readProcessIdentity} from '../src/lib/base/platform/process-identity.js'
import {BIN, actors, actorsAsync, cliEnv, readJson, removeHome, tempDir, waitFor, waitForResult} from './helpers.js'

let homes: string[] = []
let children: ChildProcess[] = []
afterEach(() => {
  for (const child of children) {
    try {
      process.kill(-child.pid!, 'SIGKILL')
    } catch {}
  }
  children = []
  for (const home of homes) removeHome(home)
  homes = []
})

/** A fresh state root with `recipes/` holding the given Recipe files. */
function home(recipes: Record<string, string> = {}): string {
  const dir = tempDir('actors-locks-')
  homes.push(dir)
  mkdirSync(join(dir, 'recipes'))
  for (const [name, text] of Object.entries(recipes)) writeFileSync(join(dir, 'recipes', name), text)
  return dir
}

/** A Recipe whose command appends `start TAG NS` / `end TAG NS` lines to LOG around a sleep. */
function timedRecipe(locks: string, seconds: number): string {
  return [
    'args: [tag:string, log:string]',
    `locks: ${locks}`,
    `template: [sh, -c, 'echo "start {tag} $(date +%s%N)" >> {log}; sleep ${seconds}; echo "end {tag} $(date +%s%N)" >> {log}']`,
  ].join('\n')
}

/** [start, end] in ns per tag, from a timed Recipe's log. */
function intervals(log: string): Array<{tag: string; start: bigint; end: bigint}> {
  const byTag = new Map<string, {tag: string; start: bigint; end: bigint}>()
  for (const line of readFileSync(log, 'utf8').trim().split('\n')) {
    const [what, tag, ns] = line.split(' ')
    const entry = byTag.get(tag) ?? {tag, start: 0n, end: 0n}
    entry[what as 'start' | 'end'] = BigInt(ns)
    byTag.set(tag, entry)
  }
  return [...byTag.values()]
}

/** The most intervals open at one time. */
function maxOverlap(spans: Array<{start: bigint; end: bigint}>): number {
  const events = spans
    .flatMap((s) => [
      {t: s.start, d: 1},
      {t: s.end, d: -1},
    ])
    .sort((a, b) => (a.t === b.t ? a.d - b.d : a.t < b.t ? -1 : 1))
  let open = 0
  let max = 0
  for (const e of events) max = Math.max(max, (open += e.d))
  return max
}

function journal(dir: string): any[] {
  const file = join(dir, 'locks', 'journal.jsonl')
  return existsSync(file)
    ? readFileSync(file, 'utf8')
        .trim()
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line))
    : []
}

function lockFile(dir: string, name: string): any {
  return readJson(join(dir, 'locks', `${name}.json`))
}

/** Launch a Recipe Run and return its launch reply. */
function launch(dir: string, recipe: string, values: string[] = [], env: NodeJS.ProcessEnv = {}): any {
  const r = actors(dir, ['run', recipe, ...values, '--recipes', join(dir, 'recipes'), '--json'], {env})
  expect(r.code, r.stderr).toBe(0)
  return r.json
}

/** A detached `sh -c SCRIPT` (its own process group, killed after the test). */
function shell(dir: string, script: string): ChildProcess {
  const child = spawn('sh', ['-c', script], {env: cliEnv(dir), detached: true, stdio: 'ignore'})
  children.push(child)
  return child
}

describe('Runs with Recipe locks', () => {
  it('N Runs with locks: [repo] never overlap, and wait as queued with waiting_for', async () => {
    const dir = home({'repo.yaml': timedRecipe('[repo]', 0.3)})
    const log = join(dir, 'log')
    // Someone else holds repo while the Runs launch: they all wait, and say for what.
    expect(actors(dir, ['lock', 'acquire', 'repo', '--holder', 'outside', '--lease', '2m']).code).toBe(0)
    const runs = [1, 2, 3, 4].map((i) => launch(dir, 'repo', [`tag=${i}`, `log=${log}`]))
    expect(runs.every((r) => r.status === 'queued')).toBe(true)
    await waitFor(() => lockFile(dir, 'repo').queue.length === 4, 30_000, 'four Runs in the queue')
    const listed = actors(dir, ['inspect', '--json']).json.runs
    expect(listed.map((r: any) => [r.status, r.waiting_for])).toEqual(runs.map(() => ['queued', ['repo']]))
    expect(readJson(join(runs[0].state_dir, 'run.json')).waiting_for).toEqual(['repo'])
    expect(actors(dir, ['inspect', '--tree']).stdout).toContain('queued (lock repo)')
    expect(actors(dir, ['lock', 'release', 'repo', '--holder', 'outside']).code).toBe(0)
    for (const r of runs) expect((await waitForResult(r.state_dir, 60_000)).status).toBe('done')
    const spans = intervals(log)
    expect(spans).toHaveLength(4)
    expect(maxOverlap(spans)).toBe(1)
    // Each Run's Trace tells its lock story; nothing is held afterwards.
    for (const r of runs) {
      const kinds = readFileSync(join(r.state_dir, 'trace.jsonl'), 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l).kind)
      expect(kinds).toContain('lock.acquired')
      expect(kinds.indexOf('lock.released')).toBeGreaterThan(kinds.indexOf('lock.acquired'))
    }
    expect(lockFile(dir, 'repo').holders).toEqual([])
  })

  it('Runs queued on a Recipe lock take it in the order they were launched (FIFO)', async () => {
    const dir = home({'fifo.yaml': timedRecipe('[fifo]', 0.2)})
    const log = join(dir, 'log')
    expect(actors(dir, ['lock', 'acquire', 'fifo', '--holder', 'outside', '--lease', '2m']).code).toBe(0)
    // Each Run is in the queue before the next is launched: launch order is queue order.
    const runs: any[] = []
    for (const tag of ['r1', 'r2', 'r3', 'r4']) {
      runs.push(launch(dir, 'fifo', [`tag=${tag}`, `log=${log}`]))
      await waitFor(() => lockFile(dir, 'fifo').queue.length === runs.length, 30_000, `${tag} in the queue`)
    }
    expect(actors(dir, ['lock', 'release', 'fifo', '--holder', 'outside']).code).toBe(0)
    for (const r of runs) expect((await waitForResult(r.state_dir, 60_000)).status).toBe('done')
    const spans = intervals(log).sort((a, b) => (a.start < b.start ? -1 : 1))
    expect(spans.map((s) => s.tag)).toEqual(['r1', 'r2', 'r3', 'r4'])
    expect(maxOverlap(spans)).toBe(1)
  })

  it('a 2-slot lock is used to capacity and never beyond', async () => {
    const dir = home({'gpu.yaml': timedRecipe('[{name: gpu, slots: 2}]', 3)})
    const log = join(dir, 'log')
    // Both slots are taken while the Runs launch, then given back together: two Runs start at once.
    for (const holder of ['x', 'y'])
      expect(actors(dir, ['lock', 'acquire', 'gpu', '--slots', '2', '--holder', holder, '--lease', '5m']).code).toBe(0)
    const runs = [1, 2, 3, 4, 5].map((i) => launch(dir, 'gpu', [`tag=${i}`, `log=${log}`]))
    await waitFor(() => lockFile(dir, 'gpu').queue.length === 5, 60_000, 'five Runs queued')
    for (const holder of ['x', 'y']) expect(actors(dir, ['lock', 'release', 'gpu', '--holder', holder]).code).toBe(0)
    for (const r of runs) expect((await waitForResult(r.state_dir, 60_000)).status).toBe('done')
    expect(maxOverlap(intervals(log))).toBeLessThanOrEqual(2)
    const held = journal(dir)
      .filter((j) => j.op === 'acquired' && j.holder.startsWith('run:'))
      .map((j) => j.held)
    expect(held).toHaveLength(5)
    expect(Math.max(...held)).toBe(2)
    expect(lockFile(dir, 'gpu').slots).toBe(2)
  })

  it('a,b against b,a under load: every Run ends, none overlaps', async () => {
    const dir = home({
      'ab.yaml': timedRecipe('[a, b]', 0.2),
      'ba.yaml': timedRecipe('[b, a]', 0.2),
      'a.yaml': timedRecipe('[a]', 0.2),
    })
    const log = join(dir, 'log')
    const runs = [1, 2, 3, 4, 5, 6, 7, 8].map((i) =>
      launch(dir, ['ab', 'ba', 'a', 'ba'][i % 4], [`tag=${i}`, `log=${log}`]),
    )
    for (const r of runs) expect((await waitForResult(r.state_dir, 90_000)).status).toBe('done')
    expect(maxOverlap(intervals(log))).toBe(1)
    // Never a partial hold: whoever took a also took b at the same moment (a-only Runs aside).
    const acquired = journal(dir).filter((j) => j.op === 'acquired')
    for (const holder of new Set(acquired.map((j) => j.holder))) {
      const locks = acquired
        .filter((j) => j.holder === holder)
        .map((j) => j.lock)
        .sort()
      expect(['a', 'a,b']).toContain(locks.join())
    }
  }, 120_000)

  it('a killed holder Run frees its slot: by control kill, and by a supervisor killed outright (exited)', async () => {
    const dir = home({'hold.yaml': 'locks: [k]\ntemplate: [sleep, "600"]'})
    // Supervisors of their own: the third's goes on waiting while the second's is killed (a killed host, which
    // supervised both, is test/supervision-host.test.ts's).
    const perRun = {ACTORS_SUPERVISION: 'run'}
    const first = launch(dir, 'hold', [], perRun)
    await waitFor(() => readJson(join(first.state_dir, 'run.json')).status === 'running', 20_000, 'first Run running')
    const second = launch(dir, 'hold', [], perRun)
    await waitFor(() => lockFile(dir, 'k').queue.length === 1, 20_000, 'second Run queued')
    expect(actors(dir, ['control', first.run, 'kill']).code).toBe(0)
    await waitFor(() => readJson(join(second.state_dir, 'run.json')).status === 'running', 20_000, 'second Run running')
    expect(lockFile(dir, 'k').holders.map((h: any) => h.label)).toEqual([`run:${second.run}`])

    const third = launch(dir, 'hold', [], perRun)
    await waitFor(() => lockFile(dir, 'k').queue.length === 1, 20_000, 'third Run queued')
    // Nobody records the end of a supervisor killed with SIGKILL: the waiter finds out on its own.
    const meta = readJson(join(second.state_dir, 'run.json'))
    process.kill(meta.pid, 'SIGKILL')
    process.kill(-meta.pgid, 'SIGKILL')
    await waitFor(() => readJson(join(third.state_dir, 'run.json')).status === 'running', 20_000, 'third Run running')
    expect(actors(dir, ['inspect', second.run, '--json']).json.status).toBe('exited')
  })

  it('a queued Run can be stopped; it leaves the queue and never runs', async () => {
    const dir = home({'hold.yaml': 'locks: [s]\ntemplate: [sleep, "600"]'})
    const first = launch(dir, 'hold')
    const second = launch(dir, 'hold')
    await waitFor(
      () => lockFile(dir, 's').queue.length === 1 && lockFile(dir, 's').holders.length === 1,
      20_000,
      'one holder, one waiter',
    )
    const stop = actors(dir, ['control', second.run, 'stop', '--json'])
    expect(stop.code, stop.stderr).toBe(0)
    const result = await waitForResult(second.state_dir)
    expect(result.status).toBe('cancelled')
    expect(readJson(join(second.state_dir, 'run.json')).child_pid).toBeUndefined()
    const status = actors(dir, ['lock', 'status', 's', '--json']).json
    expect(status.queue).toEqual([])
    expect(status.holders.map((h: any) => h.holder)).toEqual([`run:${first.run}`])
  })

  it('a Recipe with a bad locks field is refused before anything starts', () => {
    const dir = home({
      'bad.yaml': 'locks: ["a/b"]\ntemplate: [true]',
      'slots.yaml': 'locks: [{name: a, slots: 0}]\ntemplate: [true]',
      'twice.yaml': 'locks: [a, a]\ntemplate: [true]',
    })
    for (const name of ['bad', 'slots', 'twice']) {
      const r = actors(dir, ['recipes', 'validate', join(dir, 'recipes', `${name}.yaml`)])
      expect(r.code).toBe(2)
      expect(r.stderr).toContain('locks')
    }
  })
})

describe('actors lock', () => {
  it('FIFO: waiters are served in the order they queued', async () => {
    const dir = home()
    expect(actors(dir, ['lock', 'acquire', 'q', '--holder', 'h0', '--lease', '2m']).code).toBe(0)
    const waiters: Array<Promise<any>> = []
    for (let i = 1; i <= 3; i++) {
      waiters.push(
        actorsAsync(dir, ['lock', 'acquire', 'q', '--holder', `w${i}`, '--lease', '2m', '--wait', '60s', '--json']),
      )
      await waitFor(() => lockFile(dir, 'q').queue.length === i, 20_000, `waiter ${i} queued`)
    }
    for (let i = 0; i < 3; i++) {
      expect(actors(dir, ['lock', 'release', 'q', '--holder', i === 0 ? 'h0' : `w${i}`]).code).toBe(0)
      await waitFor(() => lockFile(dir, 'q').holders[0]?.label === `w${i + 1}`, 20_000, `w${i + 1} holds`)
    }
    const replies = await Promise.all(waiters)
    expect(replies.map((r) => r.code)).toEqual([0, 0, 0])
    expect(
      journal(dir)
        .filter((j) => j.op === 'acquired')
        .map((j) => j.holder),
    ).toEqual(['h0', 'w1', 'w2', 'w3'])
  })

  it('the calling shell holds the slot; when it is killed, the slot goes to the next waiter', async () => {
    const dir = home()
    const holder = shell(dir, `"${process.execPath}" "${BIN}" lock acquire k && exec sleep 600`)
    await waitFor(() => lockFile(dir, 'k').holders.length === 1, 20_000, 'the shell holds k')
    const entry = lockFile(dir, 'k').holders[0]
    expect(entry.holder).toMatchObject({kind: 'process', pid: holder.pid})
    expect(entry.holder.start).toEqual(readProcessIdentity(holder.pid!)!.start)
    expect(actors(dir, ['lock', 'acquire', 'k']).code).toBe(5)
    const waiter = actorsAsync(dir, ['lock', 'acquire', 'k', '--wait', '30s', '--json'])
    await waitFor(() => lockFile(dir, 'k').queue.length === 1, 20_000, 'waiter queued')
    process.kill(-holder.pid!, 'SIGKILL')
    const reply = await waiter
    expect(reply.code, reply.stderr).toBe(0)
    expect(journal(dir).map((j) => j.op)).toContain('freed')
  })

  it('one-liners: acquire then release in one sh -c / bash -c line and in a Makefile recipe, without --holder', () => {
    const dir = home()
    const cli = `"${process.execPath}" "${BIN}"`
    // bash and dash run the last command of -c in their own place: the holder became the release.
    for (const shellName of ['bash', 'sh']) {
      const line = spawnSync(
        shellName,
        ['-c', `${cli} lock acquire one && ${cli} lock renew one --lease 1m && ${cli} lock release one`],
        {
          env: cliEnv(dir),
          encoding: 'utf8',
        },
      )
      expect(line.status, `${shellName}: ${line.stderr}`).toBe(0)
      expect(lockFile(dir, 'one').holders).toEqual([])
    }
    // A Makefile: a one-line recipe, and a recipe of several lines under .ONESHELL (make runs it in one shell).
    writeFileSync(join(dir, 'Makefile'), `one:\n\t${cli} lock acquire mk && echo built && ${cli} lock release mk\n`)
    writeFileSync(
      join(dir, 'Oneshell.mk'),
      `.ONESHELL:\ntwo:\n\t${cli} lock acquire mk2\n\techo built\n\t${cli} lock release mk2\n`,
    )
    for (const args of [['one'], ['-f', 'Oneshell.mk', 'two']]) {
      const made = spawnSync('make', ['-s', '-C', dir, ...args], {env: cliEnv(dir), encoding: 'utf8'})
      expect(made.status, made.stderr).toBe(0)
      expect(made.stdout).toBe('built\n')
    }
    expect(lockFile(dir, 'mk').holders).toEqual([])
    expect(lockFile(dir, 'mk2').holders).toEqual([])
    // Only the holder: another process (here a shell of its own) cannot release the slot of a live holder.
    const other = spawnSync(
      'bash',
      ['-c', `${cli} lock acquire three; setsid sh -c '${cli} lock release three; true'; true`],
      {
        env: cliEnv(dir),
        encoding: 'utf8',
      },
    )
    expect(other.stderr).toContain('does not hold lock three')
    // And the slot of a job that has ended is free again.
    expect(actors(dir, ['lock', 'acquire', 'three', '--json']).json?.held).toBe(1)
  })

  it('a waiter that dies leaves the queue', async () => {
    const dir = home()
    expect(actors(dir, ['lock', 'acquire', 'd', '--holder', 'h', '--lease', '2m']).code).toBe(0)
    const waiter = shell(dir, `exec "${process.execPath}" "${BIN}" lock acquire d --wait 5m`)
    await waitFor(() => lockFile(dir, 'd').queue.length === 1, 20_000, 'waiter queued')
    process.kill(-waiter.pid!, 'SIGKILL')
    await waitFor(
      () => actors(dir, ['lock', 'status', 'd', '--json']).json.queue.length === 0,
      20_000,
      'dead waiter gone',
    )
    expect(journal(dir).at(-1)).toMatchObject({op: 'left', lock: 'd'})
  })

  it('a lease expires unless renewed; renew after expiry is refused', async () => {
    const dir = home()
    const first = actors(dir, ['lock', 'acquire', 'l', '--holder', 'a', '--lease', '1s', '--json'])
    expect(first.code).toBe(0)
    expect(Date.parse(first.json.lease_expires_at)).toBeGreaterThan(Date.now() - 5000)
    const second = actors(dir, ['lock', 'acquire', 'l', '--holder', 'b', '--lease', '20s', '--wait', '20s', '--json'])
    expect(second.code, second.stderr).toBe(0)
    expect(second.json.holders.map((h: any) => h.holder)).toEqual(['b'])
    expect(
      journal(dir)
        .filter((j) => j.op === 'expired')
        .map((j) => j.holder),
    ).toEqual(['a'])
    // b renews for 60s and keeps the slot.
    const renew = actors(dir, ['lock', 'renew', 'l', '--holder', 'b', '--lease', '60s', '--json'])
    expect(renew.code, renew.stderr).toBe(0)
    expect(Date.parse(renew.json.lease_expires_at)).toBeGreaterThan(Date.now() + 30_000)
    expect(actors(dir, ['lock', 'acquire', 'l', '--holder', 'c', '--lease', '1s', '--wait', '1500ms']).code).toBe(124)
    expect(actors(dir, ['lock', 'renew', 'l', '--holder', 'a']).code).toBe(3)
    expect(actors(dir, ['lock', 'acquire', 'l', '--holder', 'c']).code).toBe(2) // --holder needs --lease
  })

  it('--wait that runs out exits 124 and leaves the queue', () => {
    const dir = home()
    expect(actors(dir, ['lock', 'acquire', 't', '--holder', 'h', '--lease', '2m']).code).toBe(0)
    const r = actors(dir, ['lock', 'acquire', 't', '--wait', '500ms', '--json'])
    expect(r.code).toBe(124)
    expect(r.json.error.exit_code).toBe(124)
    expect(lockFile(dir, 't').queue).toEqual([])
    expect(
      journal(dir)
        .slice(-2)
        .map((j) => j.op),
    ).toEqual(['waiting', 'left'])
  })

  it("lock exec: the command's exit code, busy 5, timeout 124, bad name 2, capacity disagreement 5", () => {
    const dir = home()
    const ok = actors(dir, ['lock', 'exec', 'x', '--', 'sh', '-c', 'test -n "$(cat locks/x.json)" && exit 7'], {
      cwd: dir,
    })
    expect(ok.code, ok.stderr).toBe(7)
    expect(lockFile(dir, 'x').holders).toEqual([]) // released after the command
    expect(actors(dir, ['lock', 'exec', 'x', '--', 'no-such-command-actors']).code).toBe(127)
    expect(actors(dir, ['lock', 'acquire', 'x', '--slots', '2', '--holder', 'h', '--lease', '2m']).code).toBe(0)
    expect(actors(dir, ['lock', 'acquire', 'x', '--slots', '2', '--holder', 'i', '--lease', '2m']).code).toBe(0)
    expect(actors(dir, ['lock', 'exec', 'x', '--', 'true']).code).toBe(5)
    expect(actors(dir, ['lock', 'exec', 'x', '--wait', '300ms', '--', 'true']).code).toBe(124)
    const disagree = actors(dir, ['lock', 'exec', 'x', '--slots', '3', '--', 'true'])
    expect(disagree.code).toBe(5)
    expect(disagree.stderr).toMatch(/2 slot.*3|3.*2 slot/)
    expect(actors(dir, ['lock', 'exec', 'bad/name', '--', 'true']).code).toBe(2)
    expect(actors(dir, ['lock', 'acquire', 'bad name']).code).toBe(2)
  })

  it('50 concurrent acquirers: every grant accounted for, never beyond capacity, journal valid', async () => {
    // 50 Runs launched at once: 50 supervisors acquiring together (the lean acquirers; lock exec is tested above).
    const dir = home({
      'crowd.yaml':
        'args: [n:string, log:string]\nlocks: [{name: crowd, slots: 5}]\ntemplate: [sh, -c, \'mkdir "$0.in/$1" && ls "$0.in" | wc -l >> "$0.counts" && sleep 0.05 && rmdir "$0.in/$1" && echo "$1" >> "$0"\', "{log}", "{n}"]',
    })
    const log = join(dir, 'grants')
    mkdirSync(`${log}.in`)
    const launched = await Promise.all(
      Array.from({length: 50}, (_, i) =>
        actorsAsync(dir, ['run', 'crowd', `n=${i}`, `log=${log}`, '--recipes', join(dir, 'recipes'), '--json']),
      ),
    )
    expect(launched.filter((r) => r.code !== 0).map((r) => r.stderr)).toEqual([])
    for (const r of launched) expect((await waitForResult(r.json.state_dir, 240_000)).status).toBe('done')
    expect(readFileSync(log, 'utf8').trim().split('\n').sort()).toEqual(
      Array.from({length: 50}, (_, i) => String(i)).sort(),
    )
    expect(Math.max(...readFileSync(`${log}.counts`, 'utf8').trim().split('\n').map(Number))).toBeLessThanOrEqual(5)
    const records = journal(dir)
    for (const r of records)
      expect(r).toMatchObject({
        ts: expect.any(String),
        op: expect.any(String),
        lock: 'crowd',
        holder: expect.any(String),
      })
    // Replay: each grant is released once, and never more than 5 are held.
    const held = new Set<string>()
    let grants = 0
    for (const r of records) {
      if (r.op === 'acquired') {
        expect(held.has(r.holder)).toBe(false)
        held.add(r.holder)
        grants++
        expect(held.size).toBeLessThanOrEqual(5)
      } else if (r.op === 'released' || r.op === 'freed' || r.op === 'expired') {
        expect(held.delete(r.holder)).toBe(true)
      }
    }
    expect(grants).toBe(50)
    expect(held.size).toBe(0)
    expect(lockFile(dir, 'crowd')).toMatchObject({holders: [], queue: []})
  }, 300_000)

  it('damaged lock files fail closed, naming the file', async () => {
    const dir = home({'hold.yaml': 'locks: [c]\ntemplate: [true]'})
    mkdirSync(join(dir, 'locks'))
    const file = join(dir, 'locks', 'c.json')
    writeFileSync(file, '{"schema": "actors-lock-v1", "lock": "c", "slots": 1, "holders": [')
    for (const args of [
      ['lock', 'acquire', 'c'],
      ['lock', 'status', 'c'],
      ['lock', 'exec', 'c', '--', 'true'],
    ]) {
      const r = actors(dir, args)
      expect(r.code, args.join(' ')).toBe(1)
      expect(r.stderr).toContain(file)
    }
    const run = launch(dir, 'hold')
    const result = await waitForResult(run.state_dir)
    expect(result).toMatchObject({status: 'failed', reason: 'lock_failed'})
    expect(readFileSync(join(run.state_dir, 'stderr.log'), 'utf8')).toContain(file)
    writeFileSync(file, JSON.stringify({schema: 'something-else', lock: 'c'}))
    expect(actors(dir, ['lock', 'acquire', 'c']).stderr).toContain('something-else')
    writeFileSync(file, JSON.stringify({schema: 'actors-lock-v1', lock: 'c', slots: 0, holders: [], queue: []}))
    expect(actors(dir, ['lock', 'status', 'c']).stderr).toContain(file)
  })

  it('a damaged lock (over 256 KiB, or cut short) is listed as damaged by `lock status`; the others list as usual', () => {
    const dir = home()
    expect(actors(dir, ['lock', 'acquire', 'P', '--holder', 'h', '--lease', '1m']).code).toBe(0)
    // What a Run can do: rewrite a lock file of the shared root with 20,000 holders (over 256 KiB).
    const file = join(dir, 'locks', 'P.json')
    const state = readJson(file)
    state.holders = Array.from({length: 20_000}, (_, i) => ({
      ...state.holders[0],
      holder: {kind: 'named', id: `x${i}`},
    }))
    writeFileSync(file, JSON.stringify(state))
    expect(actors(dir, ['lock', 'acquire', 'Q', '--holder', 'h', '--lease', '1m']).code).toBe(0)
    writeFileSync(join(dir, 'locks', 'R.json'), '{"schema": "actors-lock-v1", "lock": "R", "slots": 1, "holders": [')
    const listing = actors(dir, ['lock', 'status', '--json'])
    expect(listing.code, listing.stderr).toBe(0)
    expect(listing.json.locks).toEqual([expect.objectContaining({lock: 'Q', held: 1, slots: 1})])
    expect(listing.json.damaged).toEqual([
      {lock: 'P', file, error: expect.stringContaining(file), fix: expect.any(String)},
      {lock: 'R', file: join(dir, 'locks', 'R.json'), error: expect.any(String), fix: expect.any(String)},
    ])
    const plain = actors(dir, ['lock', 'status'])
    expect(plain.code, plain.stderr).toBe(0)
    expect(plain.stdout).toMatch(/^P +damaged/m)
    expect(plain.stdout).toMatch(/^Q +1\/1 +h \(lease/m)
    expect(plain.stderr).toContain(`actors: lock P is damaged: ${file}`)
    expect(plain.stderr).toContain('remove the file by hand')
    // By name, the damaged lock still fails closed with its own error.
    const one = actors(dir, ['lock', 'status', 'P'])
    expect(one.code).toBe(1)
    expect(one.stderr).toContain(file)
  })

  it('the journal stays bounded (512 records), compacted to the newest records', () => {
    const dir = home()
    const holder = {kind: 'named' as const, id: 'j'}
    const waiter = readProcessIdentity(process.pid)!
    for (let i = 0; i < 400; i++) {
      expect(takeLocks(dir, [{name: 'j'}], {holder, waiter}, false).granted).toBe(true)
      releaseLocks(dir, ['j'], holder, {strict: true, reason: `n${i}`})
    }
    const records = journal(dir)
    expect(records.length).toBeLessThanOrEqual(MAX_JOURNAL_RECORDS)
    expect(records.length).toBeGreaterThan(100)
    expect(records.at(-1)).toMatchObject({op: 'released', reason: 'n399'})
    expect(readFileSync(join(dir, 'locks', 'journal.jsonl')).length).toBeLessThanOrEqual(1024 * 1024)
  })
})
