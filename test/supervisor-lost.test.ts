/**
 * A lost supervisor is not a lost Run (SPEC: Supervision, Containment): a
 * supervisor killed with SIGKILL leaves its command running; the next read
 * starts a supervisor that takes the Run over (timeout, stop, locks, the next
 * step, queued children), and the end is the one the command's unit recorded.
 */
import {existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {actors, actorsAsync, homesPerTest, processAlive, readJson, waitFor, waitForResult} from './helpers.js'

const newHome = homesPerTest('actors-lost-')

/** A state root with `recipes/` holding `files`. */
function homeWith(files: Record<string, string> = {}): string {
  const home = newHome()
  mkdirSync(join(home, 'recipes'))
  for (const [name, text] of Object.entries(files)) writeFileSync(join(home, 'recipes', name), text)
  return home
}

function launch(home: string, args: string[], env: NodeJS.ProcessEnv = {}): {run: string; state_dir: string} {
  const r = actors(home, ['run', '--json', '--recipes', join(home, 'recipes'), ...args], {env})
  expect(r.code, r.stderr).toBe(0)
  return r.json
}

/** SIGKILL the Run's supervisor once its command runs (step `step`), and wait until it is gone. */
async function killSupervisor(dir: string, step = 0): Promise<any> {
  const meta = await waitFor(
    () => {
      const m = readJson(join(dir, 'run.json'))
      return m.children_processes?.some((c: any) => c.step === step) && m
    },
    15_000,
    `step ${step} started`,
  )
  process.kill(meta.pid, 'SIGKILL')
  await waitFor(() => !processAlive(meta.pid), 5000, 'the supervisor gone')
  return meta
}

/** Read the Run as any command does (the read that takes it over), and the supervisor it then records. */
function readAndAdopt(home: string, run: string, lost: number): any {
  const shown = actors(home, ['inspect', run, '--json'])
  expect(shown.code, shown.stderr).toBe(0)
  expect(shown.json.status).toBe('running')
  const meta = readJson(join(shown.json.state_dir ?? '', 'run.json'))
  expect(meta.pid).not.toBe(lost)
  expect(meta.adopted_at).toBeDefined()
  return meta
}

for (const containment of ['cgroup', 'tracked'] as const) {
  const env = containment === 'tracked' ? {ACTORS_CONTAINMENT: 'tracked'} : {}
  describe(`a lost supervisor (${containment})`, () => {
    it('the command goes on and its own exit status is the end: failed, exit_code 7', async () => {
      const home = homeWith()
      const r = launch(home, ['--', 'sh', '-c', 'sleep 1; exit 7'], env)
      const lost = await killSupervisor(r.state_dir)
      const adopter = readAndAdopt(home, r.run, lost.pid)
      expect(processAlive(adopter.pid)).toBe(true)
      const result = await waitForResult(r.state_dir)
      expect(result).toMatchObject({status: 'failed', exit_code: 7, reason: 'exit_code'})
    })

    it('a unit that ended while nobody watched: the first read writes its recorded end', async () => {
      const home = homeWith()
      const r = launch(home, ['--', 'sh', '-c', 'sleep 0.5; exit 3'], env)
      const lost = await killSupervisor(r.state_dir)
      await waitFor(() => lost.children_processes.every((c: any) => !processAlive(c.pid)), 5000, 'the command ended')
      const shown = actors(home, ['inspect', r.run, '--json'])
      expect(shown.json).toMatchObject({status: 'failed'})
      expect(readJson(join(r.state_dir, 'result.json'))).toMatchObject({status: 'failed', exit_code: 3})
    })

    it('a signal death is recorded as the signal; another attempt and a parallel plan go on', async () => {
      // Each command outlives three launches and three take-overs on a loaded machine: read after its end, a Run
      // is settled by its recorded end instead of adopted.
      // Supervisors of their own, killed one by one: a killed host takes all three at once, before the parallel
      // plan's second step may have started (the host SIGKILLed mid-run is test/supervision-host.test.ts's).
      const home = homeWith({'par.yaml': `parallel: ["sleep 4", "sh -c 'sleep 4.2; exit 4'"]\n`})
      const perRun = {...env, ACTORS_SUPERVISION: 'run'}
      const signalled = launch(home, ['--', 'sh', '-c', 'sleep 4; kill -USR1 $$'], perRun)
      const retried = launch(home, ['--retry', '2', '--', 'sh', '-c', 'sleep 4; exit 3'], perRun)
      const parallel = launch(home, ['par'], perRun)
      for (const r of [signalled, retried]) readAndAdopt(home, r.run, (await killSupervisor(r.state_dir)).pid)
      readAndAdopt(home, parallel.run, (await killSupervisor(parallel.state_dir, 1)).pid)
      expect(await waitForResult(signalled.state_dir)).toMatchObject({
        status: 'failed',
        signal: 'SIGUSR1',
        reason: 'signal',
      })
      expect(await waitForResult(retried.state_dir)).toMatchObject({status: 'failed', exit_code: 3, attempts: 2})
      expect(await waitForResult(parallel.state_dir)).toMatchObject({status: 'failed', exit_code: 4})
    })

    it('with its supervisor alive, a signal death reads as before, and the command ignores no signal', async () => {
      const home = homeWith()
      const signalled = launch(home, ['--', 'sh', '-c', 'kill -USR1 $$'], env)
      expect(await waitForResult(signalled.state_dir)).toMatchObject({status: 'failed', signal: 'SIGUSR1'})
      const ignored = launch(home, ['--', 'sh', '-c', 'grep SigIgn /proc/self/status'], env)
      expect(await waitForResult(ignored.state_dir)).toMatchObject({status: 'done'})
      expect(readFileSync(join(ignored.state_dir, 'stdout.log'), 'utf8')).toBe('SigIgn:\t0000000000000000\n')
    })

    it('a read by the Run itself starts no supervisor inside its own unit; a read from outside does', async () => {
      const home = homeWith()
      const mark = join(home, 'read')
      const script = `kill -9 $(cut -d' ' -f4 /proc/$PPID/stat); sleep 0.3; actors inspect "$ACTORS_RUN" --json >/dev/null; touch ${mark}; sleep 1.5; exit 5`
      const r = launch(home, ['--', 'sh', '-c', script], env)
      const first = await waitFor(() => readJson(join(r.state_dir, 'run.json')).pid, 10_000, 'the supervisor')
      await waitFor(() => existsSync(mark), 10_000, 'the read from inside')
      expect(readJson(join(r.state_dir, 'run.json'))).toMatchObject({pid: first, status: 'running'})
      readAndAdopt(home, r.run, first)
      expect(await waitForResult(r.state_dir)).toMatchObject({status: 'failed', exit_code: 5})
    })

    it('the timeout still ends it: failed, reason timeout', async () => {
      const home = homeWith()
      const r = launch(home, ['--timeout', '2s', '--', 'sleep', '30'], env)
      const lost = await killSupervisor(r.state_dir)
      // Taken over late: what is left of the timeout, not a whole one from the take-over (a read past the deadline
      // ends it itself: take-over-limits.test.ts).
      await new Promise((resolve) => setTimeout(resolve, 1000))
      readAndAdopt(home, r.run, lost.pid)
      const result = await waitForResult(r.state_dir, 15_000)
      expect(result).toMatchObject({status: 'failed', reason: 'timeout'})
      expect(result.duration_ms).toBeLessThan(3500)
    })

    it('stop after the take-over: cancelled', async () => {
      const home = homeWith()
      const r = launch(home, ['--', 'sleep', '30'], env)
      const lost = await killSupervisor(r.state_dir)
      readAndAdopt(home, r.run, lost.pid)
      const stop = actors(home, ['control', r.run, 'stop', '--json'])
      expect(stop.code, stop.stderr).toBe(0)
      expect(await waitForResult(r.state_dir)).toMatchObject({status: 'cancelled'})
      for (const c of lost.children_processes) expect(processAlive(c.pid)).toBe(false)
    })

    it('a sequence killed during step 1 still runs step 2: done', async () => {
      const home = homeWith({
        'two.yaml': `sequence: ["sleep 1", "sh -c 'echo second > ${'{out}'}'"]\nargs: [out:string]\n`,
      })
      const out = join(home, 'second.txt')
      const r = launch(home, ['two', `out=${out}`], env)
      const lost = await killSupervisor(r.state_dir, 0)
      readAndAdopt(home, r.run, lost.pid)
      expect(await waitForResult(r.state_dir)).toMatchObject({status: 'done', exit_code: 0})
      expect(readFileSync(out, 'utf8')).toBe('second\n')
    })
  })
}

describe('a lost supervisor keeps what the Run holds', () => {
  it('readers that find it lost at once start one supervisor for it, never two', async () => {
    const home = homeWith()
    const r = launch(home, ['--', 'sleep', '3'])
    const lost = await killSupervisor(r.state_dir)
    await Promise.all([1, 2, 3, 4, 5, 6].map(() => actorsAsync(home, ['inspect', r.run, '--json'])))
    const adopters = readdirSync('/proc').filter((pid) => {
      try {
        const line = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')
        return line.includes(r.state_dir) && line.includes('adopt')
      } catch {
        return false
      }
    })
    expect(adopters).toEqual([String(readJson(join(r.state_dir, 'run.json')).pid)])
    expect(adopters).not.toContain(String(lost.pid))
    expect(await waitForResult(r.state_dir)).toMatchObject({status: 'done'})
  })

  it('its Recipe lock is not taken by a waiting Run until its command ends, then it is', async () => {
    const home = homeWith({
      'hold.yaml': "locks: [k]\ntemplate: [sh, -c, 'sleep 2; date +%s%N > {mark}']\nargs: [mark:string]",
    })
    // Supervisors of their own: the waiter's goes on while the holder's is killed (a killed host, which supervised
    // both, is test/supervision-host.test.ts's).
    const perRun = {ACTORS_SUPERVISION: 'run'}
    const first = launch(home, ['hold', `mark=${join(home, 'first')}`], perRun)
    await waitFor(() => readJson(join(first.state_dir, 'run.json')).status === 'running', 15_000, 'first running')
    const second = launch(home, ['hold', `mark=${join(home, 'second')}`], perRun)
    await killSupervisor(first.state_dir)
    // Nobody reads the first Run: the waiter's own look at the lock must not pass it while the command lives.
    const startedSecond = await waitFor(
      () => readJson(join(second.state_dir, 'run.json')).started_at,
      20_000,
      'second Run started',
    )
    const firstEnd = Number(readFileSync(join(home, 'first'), 'utf8')) / 1e6
    expect(Date.parse(startedSecond)).toBeGreaterThanOrEqual(Math.floor(firstEnd) - 5)
    expect(await waitForResult(second.state_dir)).toMatchObject({status: 'done'})
    expect(actors(home, ['inspect', first.run, '--json']).json.status).toBe('done')
  })

  it("a waiting Run's own supervisor lost before its command started: the next read starts it afresh, once", async () => {
    const home = homeWith({
      'hold.yaml': "locks: [k]\ntemplate: [sh, -c, 'echo {tag} >> {log}; sleep 1']\nargs: [tag:string, log:string]",
    })
    const log = join(home, 'starts.log')
    const first = launch(home, ['hold', 'tag=first', `log=${log}`])
    await waitFor(() => readJson(join(first.state_dir, 'run.json')).status === 'running', 15_000, 'first running')
    const second = launch(home, ['hold', 'tag=second', `log=${log}`])
    const waiting = await waitFor(
      () => {
        const m = readJson(join(second.state_dir, 'run.json'))
        return m.waiting_for && m.process_identity && m
      },
      15_000,
      'second waiting',
    )
    process.kill(waiting.pid, 'SIGKILL')
    await waitFor(() => !processAlive(waiting.pid), 5000, 'its supervisor gone')
    // It was a queue entry: not `exited`, started again (and only once) by whoever reads it.
    actors(home, ['inspect', '--json'])
    actors(home, ['inspect', second.run, '--json'])
    expect(
      readJson(join(second.state_dir, 'run.json')).restarted_at,
      JSON.stringify(readJson(join(second.state_dir, 'run.json'))),
    ).toBeDefined()
    expect(await waitForResult(second.state_dir)).toMatchObject({status: 'done'})
    expect(readFileSync(log, 'utf8')).toBe('first\nsecond\n')
  })

  it("a parent's queued child still starts once the parent's running child ends", async () => {
    const home = homeWith()
    const script = `actors run --name c1 -- sleep 1 >/dev/null; actors run --name c2 -- true >/dev/null; sleep 3`
    const parent = launch(home, ['--name', 'p', '--max-parallel', '1', '--', 'sh', '-c', script])
    const c1 = await waitFor(() => readJson(join(home, 'runs', 'c1', 'run.json')), 15_000, 'c1 launched')
    await waitFor(() => readJson(join(home, 'runs', 'c2', 'run.json')).status === 'queued', 15_000, 'c2 queued')
    await killSupervisor(join(home, 'runs', 'c1'))
    expect(c1.run).toBe('c1')
    actors(home, ['inspect', 'c1', '--json'])
    expect(await waitForResult(join(home, 'runs', 'c2'))).toMatchObject({status: 'done'})
    expect(await waitForResult(join(home, 'runs', 'c1'))).toMatchObject({status: 'done'})
    expect(await waitForResult(parent.state_dir)).toMatchObject({status: 'done'})
  })
})
