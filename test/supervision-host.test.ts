/**
 * The supervision host (the default; ACTORS_SUPERVISION=run opts out; docs/runs.md "Supervision"):
 * one process per state root supervises every Run `actors run` hands it,
 * readers prove it as they prove a Run's own supervisor, its death leaves
 * the Runs to be taken over, and it leaves once idle.
 */
import {spawn} from 'node:child_process'
import {existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, unlinkSync, writeFileSync} from 'node:fs'
import {connect} from 'node:net'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {readProcessIdentity} from '../src/lib/base/platform/process-identity.js'
import {
  actors,
  actorsAsync,
  homesPerTest,
  processAlive,
  processesOfHome,
  readJson,
  waitFor,
  waitForResult,
  commandStarted,
} from './helpers.js'

const newHome = homesPerTest('actors-host-')
const HOST = {ACTORS_SUPERVISION: 'host'}

function launch(
  home: string,
  args: string[],
  env: NodeJS.ProcessEnv = {},
): {run: string; state_dir: string; pid: number} {
  const r = actors(home, ['run', '--json', ...args], {env: {...HOST, ...env}})
  expect(r.code, r.stderr).toBe(0)
  return r.json
}

/** The supervisor processes of `home`: per-Run ones and hosts alike. */
function supervisorsOf(home: string): number[] {
  return processesOfHome(home).filter((pid) => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('/dist/supervisor.cjs\0')
    } catch {
      return false
    }
  })
}

function commandLine(pid: number): string[] {
  return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').slice(1, -1)
}

const started = (dir: string) => commandStarted(dir)

function waited(home: string, run: string): any {
  const r = actors(home, ['wait', run, '--json'], {timeout: 30_000})
  return r.json?.rows?.find((row: any) => row.run === run)
}

describe('the supervision host', () => {
  it('several Runs share one host; each end is recorded and wait delivers it', async () => {
    const home = newHome()
    // Launched at once: whichever starts the host, the others find it (or the one that won the bind).
    const launches = await Promise.all(
      [0, 3, 5].map((code, i) =>
        actorsAsync(home, ['run', '--json', '--name', `r${i}`, '--', 'sh', '-c', `sleep 1.5; exit ${code}`], {
          env: HOST,
        }),
      ),
    )
    for (const r of launches) expect(r.code, r.stderr).toBe(0)
    const metas = await Promise.all(launches.map((r) => started(r.json.state_dir)))
    const host = metas[0].pid
    expect(metas.map((m) => m.pid)).toEqual([host, host, host])
    expect(launches.map((r) => r.json.pid)).toEqual([host, host, host])
    expect(commandLine(host).slice(1)).toEqual(['--host', home])
    // A host started by a launcher that lost the race finds this one recorded and leaves at once, supervising nothing.
    await waitFor(() => supervisorsOf(home).join() === String(host), 5000, 'one supervising process')
    // Proven alive by every reader: nothing taken over while the host supervises.
    const shown = actors(home, ['inspect', 'r1', '--json'])
    expect(shown.json.status).toBe('running')
    expect([0, 1, 2].map((i) => waited(home, `r${i}`))).toMatchObject([
      {status: 'done', exit_code: 0},
      {status: 'failed', exit_code: 3},
      {status: 'failed', exit_code: 5},
    ])
    for (const r of launches) expect(readJson(join(r.json.state_dir, 'run.json')).adopted_at).toBeUndefined()
  })

  it('--timeout, control stop and control kill end Runs the host supervises', async () => {
    const home = newHome()
    const timed = launch(home, ['--name', 't', '--timeout', '1s', '--', 'sleep', '30'])
    const stopped = launch(home, ['--name', 's', '--', 'sleep', '30'])
    const killed = launch(home, ['--name', 'k', '--', 'sleep', '30'])
    const host = (await started(timed.state_dir)).pid
    await started(stopped.state_dir)
    await started(killed.state_dir)
    expect(actors(home, ['control', 's', 'stop']).code).toBe(0)
    expect(actors(home, ['control', 'k', 'kill']).code).toBe(0)
    expect(await waitForResult(timed.state_dir)).toMatchObject({status: 'failed', reason: 'timeout'})
    expect(await waitForResult(stopped.state_dir)).toMatchObject({status: 'cancelled'})
    expect(await waitForResult(killed.state_dir)).toMatchObject({status: 'killed'})
    for (const r of [timed, stopped, killed]) {
      const meta = readJson(join(r.state_dir, 'run.json'))
      // The host ended them itself: never judged lost, never taken over.
      expect(meta.pid).toBe(host)
      expect(meta.adopted_at).toBeUndefined()
    }
  })

  it('the host SIGKILLed mid-run: the commands go on and their exit statuses are recorded', async () => {
    const home = newHome()
    const failing = launch(home, ['--name', 'f', '--', 'sh', '-c', 'sleep 2; exit 7'])
    const passing = launch(home, ['--name', 'p', '--', 'sh', '-c', 'sleep 2.5'])
    const meta = await started(failing.state_dir)
    await started(passing.state_dir)
    process.kill(meta.pid, 'SIGKILL')
    await waitFor(() => !processAlive(meta.pid), 5000, 'the host gone')
    expect(meta.children_processes.every((c: any) => processAlive(c.pid))).toBe(true)
    // The next read takes both over (a supervisor of each Run's own, as for a lost per-Run supervisor).
    expect(actors(home, ['inspect', '--json']).code).toBe(0)
    expect(await waitForResult(failing.state_dir)).toMatchObject({status: 'failed', exit_code: 7, reason: 'exit_code'})
    expect(await waitForResult(passing.state_dir)).toMatchObject({status: 'done', exit_code: 0})
    expect(readJson(join(failing.state_dir, 'run.json')).adopted_at).toBeDefined()
  })

  it('the host SIGKILLed while one Run waits for the lock another holds: the next read starts it afresh, after the holder', async () => {
    const home = newHome()
    mkdirSync(join(home, 'recipes'))
    const log = join(home, 'spans.log')
    const body = `echo start {tag} >> ${log}; sleep {s}; echo end {tag} >> ${log}`
    writeFileSync(
      join(home, 'recipes', 'l.yaml'),
      `args: [tag:string, s:string]\nlocks: [L]\ntemplate: [sh, -c, ${JSON.stringify(body)}]\n`,
    )
    const holder = launch(home, ['l', 'tag=A', 's=1.5'])
    const waiter = launch(home, ['l', 'tag=B', 's=0.2'])
    const meta = await started(holder.state_dir)
    expect(readJson(join(waiter.state_dir, 'run.json'))).toMatchObject({status: 'queued', pid: meta.pid})
    process.kill(meta.pid, 'SIGKILL')
    await waitFor(() => !processAlive(meta.pid), 5000, 'the host gone')
    // The read that takes the holder over starts the waiter again, as the queue entry it still is.
    expect(actors(home, ['inspect', '--json']).code).toBe(0)
    const restarted = readJson(join(waiter.state_dir, 'run.json'))
    expect(restarted.restarted_at).toBeDefined()
    expect(restarted.pid).not.toBe(meta.pid)
    expect(await waitForResult(holder.state_dir)).toMatchObject({status: 'done', exit_code: 0})
    expect(await waitForResult(waiter.state_dir)).toMatchObject({status: 'done', exit_code: 0})
    // One run each, B only after A's end.
    expect(readFileSync(log, 'utf8').trim().split('\n')).toEqual(['start A', 'end A', 'start B', 'end B'])
    expect(readFileSync(join(waiter.state_dir, 'trace.jsonl'), 'utf8')).toContain('runtime.restarted')
  })

  it('a Run that kills the host as its first act: the launch answers 0, the command runs once, its end is recorded (x5)', async () => {
    const home = newHome()
    const log = join(home, 'runs.log')
    // The host is the parent of the command's wrapper: killed before it could answer the launcher.
    const script = `echo $ACTORS_RUN >> ${log}; kill -9 $(cut -d" " -f4 /proc/$PPID/stat); sleep 0.5; exit 6`
    const runs = [] as {run: string; state_dir: string}[]
    // Tracked: the command starts at once (no cgroup to join first), before the host has answered.
    const tracked = {ACTORS_CONTAINMENT: 'tracked'}
    for (let i = 0; i < 5; i++) runs.push(launch(home, ['--name', `k${i}`, '--', 'sh', '-c', script], tracked))
    expect(actors(home, ['inspect', '--json'], {env: tracked}).code).toBe(0)
    for (const r of runs)
      expect(await waitForResult(r.state_dir)).toMatchObject({status: 'failed', exit_code: 6, reason: 'exit_code'})
    expect(readFileSync(log, 'utf8').trim().split('\n').sort()).toEqual(runs.map((r) => r.run).sort())
  })

  it('a Run that stops the host (SIGSTOP) as its first act: its launch answers at once, a reader ends it on time (x3)', async () => {
    const home = newHome()
    // Before the host answered its launcher (tracked: the command starts at once): the launch used to wait the host's
    // whole answer time (60 s) for a host that could not answer.
    const script = 'kill -STOP $(cut -d" " -f4 /proc/$PPID/stat); exec sleep 30'
    const tracked = {ACTORS_CONTAINMENT: 'tracked'}
    for (let i = 0; i < 3; i++) {
      const began = Date.now()
      const r = actors(home, ['run', '--json', '--name', `s${i}`, '--timeout', '1s', '--', 'sh', '-c', script], {
        env: {...HOST, ...tracked},
        timeout: 20_000,
      })
      expect(r.code, r.stderr).toBe(0)
      expect(Date.now() - began).toBeLessThan(5000)
      // The stopped host is continued by the next reader, and the Run's timeout ends it.
      const ended = await waitFor(
        () => {
          const row = actors(home, ['inspect', r.json.run, '--json'], {env: tracked}).json
          return row && !['running', 'queued', 'paused'].includes(row.status) ? row : undefined
        },
        20_000,
        `s${i} ended`,
      )
      expect(ended).toMatchObject({status: 'failed', result: {reason: 'timeout'}})
    }
  })

  it("a Run whose lock is kept at its end stalls its own end only, not another Run's", async () => {
    const home = newHome()
    const kept = launch(home, ['--name', 'kept', '--', 'sleep', '1'])
    const other = launch(home, ['--name', 'other', '--', 'sh', '-c', 'sleep 1.5; exit 4'])
    await started(kept.state_dir)
    await started(other.state_dir)
    // Kept by a live process (this one), as a lock file of the kernel's own kind: a symbolic link to its identity.
    const lock = join(kept.state_dir, '.lock')
    symlinkSync(JSON.stringify(readProcessIdentity(process.pid)), lock)
    try {
      const from = Date.now()
      expect(await waitForResult(other.state_dir)).toMatchObject({status: 'failed', exit_code: 4})
      // Its end came as its command ended (about 1.5 s after the launch), not after the kept lock's wait.
      expect(Date.now() - from).toBeLessThan(3000)
      expect(existsSync(join(kept.state_dir, 'result.json'))).toBe(false)
    } finally {
      unlinkSync(lock)
    }
    expect(await waitForResult(kept.state_dir)).toMatchObject({status: 'done', exit_code: 0})
  })

  it("a host held past a Run's deadline (traced, which no reader can undo): the Run times out, the others are taken over", async () => {
    const home = newHome()
    mkdirSync(join(home, 'recipes'))
    writeFileSync(
      join(home, 'recipes', 'held.yaml'),
      'description: held\ntemplate: sleep 60\nkill_grace: 1s\ntimeout: 1s\n',
    )
    const held = launch(home, ['--recipes', join(home, 'recipes'), 'held'])
    const other = launch(home, ['--name', 'other', '--', 'sh', '-c', 'sleep 14; exit 6'])
    const host = (await started(held.state_dir)).pid
    await started(other.state_dir)
    // Stopped under ptrace by a process that is no Run's: no signal continues it, nothing of a Run to blame.
    const attach = [
      'import ctypes, os, sys, time',
      'libc = ctypes.CDLL(None, use_errno=True)',
      'pid = int(sys.argv[1])',
      'if libc.ptrace(16, pid, None, None) != 0: sys.exit(1)',
      'os.waitpid(pid, 0x40000000)',
      'print("held", flush=True)',
      'time.sleep(60)',
    ].join('\n')
    const tracer = spawn('python3', ['-c', attach, String(host)], {stdio: ['ignore', 'pipe', 'ignore']})
    try {
      await new Promise((resolve) => tracer.stdout.once('data', resolve))
      // Past the deadline (1 s), its kill grace (1 s) and room (7 s): a read ends it as the host's timeout would have.
      await waitFor(
        () => actors(home, ['inspect', held.run, '--json']).json?.status === 'failed',
        20_000,
        'the held Run timed out',
      )
      expect(readJson(join(held.state_dir, 'result.json'))).toMatchObject({status: 'failed', reason: 'timeout'})
      // Sent SIGKILL before the end was written; a loaded machine takes a moment to finish its exit.
      await waitFor(() => !processAlive(host), 5000, 'the held host gone')
      // The held host is gone: its other Run is taken over and ends as its command does.
      actors(home, ['inspect', '--json'])
      expect(await waitForResult(other.state_dir, 15_000)).toMatchObject({status: 'failed', exit_code: 6})
      expect(readJson(join(other.state_dir, 'run.json')).adopted_at).toBeDefined()
    } finally {
      tracer.kill('SIGKILL')
    }
  }, 40_000)

  it('the host leaves once idle, and the next launch starts another', async () => {
    const home = newHome()
    const env = {ACTORS_SUPERVISION_IDLE_MS: '300'}
    const first = launch(home, ['--name', 'a', '--', 'true'], env)
    expect(await waitForResult(first.state_dir)).toMatchObject({status: 'done'})
    await waitFor(() => !processAlive(first.pid), 5000, 'the idle host gone')
    expect(existsSync(join(home, 'supervision', 'host.sock'))).toBe(false)
    const second = launch(home, ['--name', 'b', '--', 'true'], env)
    expect(second.pid).not.toBe(first.pid)
    expect(await waitForResult(second.state_dir)).toMatchObject({status: 'done'})
  })

  it('a Run handed over again (by anyone who can reach the socket) is left as it is', async () => {
    const home = newHome()
    const hosted = launch(home, ['--name', 'hosted', '--', 'sleep', '3'])
    // Its own supervisor, not the host's: the host finds the start recorded (claim), not in its own list.
    const own = actors(home, ['run', '--json', '--name', 'own', '--', 'sleep', '3'], {
      env: {ACTORS_SUPERVISION: 'run'},
    }).json
    const before = [await started(hosted.state_dir), await started(own.state_dir)]
    const handOver = (dir: string) =>
      new Promise<string>((resolve, reject) => {
        let text = ''
        const socket = connect(join(home, 'supervision', 'host.sock'))
        socket.on('connect', () => socket.write(`${JSON.stringify({dir, env: {}})}\n`))
        socket.on('data', (chunk) => (text += chunk))
        socket.on('end', () => resolve(text))
        socket.on('error', reject)
      })
    // The hosted one is in the host's hands already (its pid); the other is declined, no launcher proven.
    expect(JSON.parse(await handOver(hosted.state_dir))).toEqual({pid: before[0].pid})
    expect(JSON.parse(await handOver(own.state_dir))).toMatchObject({declined: true})
    for (const [i, r] of [hosted, own].entries()) {
      const after = readJson(join(r.state_dir, 'run.json'))
      expect(after.children_processes).toEqual(before[i].children_processes)
      expect(after.pid).toBe(before[i].pid)
      expect(await waitForResult(r.state_dir)).toMatchObject({status: 'done', exit_code: 0})
      expect(readFileSync(join(r.state_dir, 'stderr.log'), 'utf8')).toBe('')
    }
  })

  it('a link where the supervision dir belongs is refused, and nothing listens through it', () => {
    const home = newHome()
    const elsewhere = newHome()
    symlinkSync(elsewhere, join(home, 'supervision'))
    const r = actors(home, ['run', '--json', '--', 'true'], {env: HOST})
    expect(r.code).toBe(1)
    expect(r.stderr).toContain(`${join(home, 'supervision')} is a symbolic link`)
    expect(existsSync(join(elsewhere, 'host.sock'))).toBe(false)
    // Refused before the Run was made: nothing left waiting for a supervisor.
    expect(
      existsSync(join(home, 'runs')) ? readdirSync(join(home, 'runs')).filter((n) => !n.startsWith('.')) : [],
    ).toEqual([])
  })

  it('a launch under other kernel settings (tracked containment) gets a supervisor of its own, not the host', async () => {
    const home = newHome()
    const first = launch(home, ['--name', 'first', '--', 'sleep', '2'])
    const host = (await started(first.state_dir)).pid
    const same = launch(home, ['--name', 'same', '--', 'sleep', '2'])
    const tracked = launch(home, ['--name', 'tracked', '--', 'sleep', '2'], {ACTORS_CONTAINMENT: 'tracked'})
    const [sameMeta, trackedMeta] = [await started(same.state_dir), await started(tracked.state_dir)]
    expect(sameMeta.pid).toBe(host)
    expect(trackedMeta.pid).not.toBe(host)
    expect(commandLine(trackedMeta.pid)[1]).toBe(tracked.state_dir)
    expect(trackedMeta.containment.kind).toBe('tracked')
    for (const r of [first, same, tracked]) expect(await waitForResult(r.state_dir)).toMatchObject({status: 'done'})
  })

  it('with ACTORS_SUPERVISION=run each Run keeps a supervisor of its own; an unknown mode is refused', async () => {
    const home = newHome()
    const perRun = {env: {ACTORS_SUPERVISION: 'run'}}
    const a = actors(home, ['run', '--json', '--', 'sleep', '2'], perRun).json
    const b = actors(home, ['run', '--json', '--', 'sleep', '2'], perRun).json
    const [ma, mb] = [await started(a.state_dir), await started(b.state_dir)]
    expect(ma.pid).not.toBe(mb.pid)
    expect(commandLine(ma.pid)[1]).toBe(a.state_dir)
    const runsBefore = readdirSync(join(home, 'runs')).sort()
    const typo = actors(home, ['run', '--json', '--name', 'typo', '--', 'true'], {env: {ACTORS_SUPERVISION: 'hots'}})
    expect(typo.code).toBe(2)
    expect(typo.stderr).toContain('ACTORS_SUPERVISION="hots" is not a supervision mode')
    expect(typo.stderr).not.toMatch(/\n\s+at /)
    expect(readdirSync(join(home, 'runs')).sort()).toEqual(runsBefore)
  })

  it("without ACTORS_SUPERVISION the state root's host supervises the Runs actors run launches", async () => {
    const home = newHome()
    const env = {env: {ACTORS_SUPERVISION: undefined}}
    const a = actors(home, ['run', '--json', '--', 'sleep', '2'], env).json
    const b = actors(home, ['run', '--json', '--', 'sleep', '2'], env).json
    const [ma, mb] = [await started(a.state_dir), await started(b.state_dir)]
    expect(ma.pid).toBe(mb.pid)
    expect(commandLine(ma.pid).slice(1, 3)).toEqual(['--host', home])
  })
})
