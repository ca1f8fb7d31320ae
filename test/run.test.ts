/**
 * `actors run`, `inspect`, `logs`, `emit` and `prune` end to end through the
 * real CLI: exit codes and JSON fields, real supervisors and signals.
 */
import {type ChildProcess, execFileSync, spawn, spawnSync} from 'node:child_process'
import {existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {afterEach, beforeEach, describe, expect, it} from 'vitest'
import {
  BIN,
  actors,
  actorsAsync,
  cliEnv,
  processAlive,
  processState,
  readJson,
  removeDir,
  tempDir,
  waitFor,
  waitForResult,
  removeHome,
  writeFinishedRun,
} from './helpers.js'

let home: string
let work: string
beforeEach(() => {
  home = tempDir('actors-home-')
  work = tempDir('actors-work-')
})
/** Processes a test started outside any Run; killed after each test. */
const strangers: ChildProcess[] = []
afterEach(() => {
  for (const child of strangers.splice(0))
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
  removeHome(home)
  removeDir(work)
})

/**
 * End a Run by SIGTERM to its supervisor, once the supervisor is up: it
 * records child_pid only after installing its signal handlers, and a SIGTERM
 * during its boot would kill it before it could write a result.
 */
async function terminateSupervisor(stateDir: string): Promise<void> {
  const meta = await waitFor(() => {
    const m = readJson(join(stateDir, 'run.json'))
    return m.child_pid && m
  })
  process.kill(meta.pid, 'SIGTERM')
  await waitForResult(stateDir)
}

describe('run', () => {
  it('launches an ad-hoc command and records a durable Run', async () => {
    const r = actors(home, ['run', '--json', '--', 'sh', '-c', 'echo out; echo err >&2; exit 3'])
    expect(r.code).toBe(0)
    expect(r.json).toMatchObject({status: 'running', run: expect.stringMatching(/^sh-[0-9a-f]{6}$/)})
    expect(r.json.run_instance_id).toMatch(/^[0-9a-f-]{36}$/)
    expect(r.json.state_dir).toBe(join(home, 'runs', r.json.run))
    expect(typeof r.json.pid).toBe('number')
    const result = await waitForResult(r.json.state_dir)
    expect(result).toMatchObject({
      status: 'failed',
      exit_code: 3,
      reason: 'exit_code',
      attempts: 1,
      run_instance_id: r.json.run_instance_id,
    })
    const meta = readJson(join(r.json.state_dir, 'run.json'))
    expect(meta).toMatchObject({
      schema: 'actors-run-v1',
      run: r.json.run,
      argv: ['sh', '-c', 'echo out; echo err >&2; exit 3'],
      owner: 'default',
      depth: 0,
      root: r.json.run,
      status: 'failed',
    })
    expect(meta.process_identity.pid).toBe(r.json.pid)
    expect(readFileSync(join(r.json.state_dir, 'stdout.log'), 'utf8')).toBe('out\n')
    expect(readFileSync(join(r.json.state_dir, 'stderr.log'), 'utf8')).toBe('err\n')
    const shown = actors(home, ['inspect', r.json.run, '--json'])
    expect(shown.code).toBe(0)
    expect(shown.json).toMatchObject({run: r.json.run, status: 'failed', exit_code: 3})
  })

  it('prints the Run id alone on stdout without --json', () => {
    const r = actors(home, ['run', '--name', 'plain-1', '--', 'true'])
    expect(r.code).toBe(0)
    expect(r.stdout).toBe('plain-1\n')
    expect(r.stderr).toContain('plain-1')
    expect(r.stdout + r.stderr).not.toMatch(/\u001B\[/)
  })

  it('a local Run launched inside a Slurm job records the job (it lives no longer than the job); elsewhere it records none', () => {
    const inside = actors(home, ['run', '--name', 'in-job', '--wait', '--json', '--', 'true'], {
      env: {SLURM_JOB_ID: '4242'},
    })
    expect(inside.code, inside.stderr).toBe(0)
    expect(readJson(join(home, 'runs', 'in-job', 'run.json')).executor).toEqual({kind: 'local', slurm_job_id: '4242'})
    const outside = actors(home, ['run', '--name', 'no-job', '--wait', '--json', '--', 'true'])
    expect(outside.code, outside.stderr).toBe(0)
    expect(readJson(join(home, 'runs', 'no-job', 'run.json')).executor).toEqual({kind: 'local'})
  })

  it('passes values with shell metacharacters as single argv words, never through a shell', async () => {
    const canary = join(work, 'pwned')
    const evil = `$(touch ${canary}); touch ${canary} && echo "'quoted'" | cat > ${canary}`
    const r = actors(home, ['run', '--json', 'shell-free-echo', `text=${evil}`])
    expect(r.code, r.stderr).toBe(0)
    await waitForResult(r.json.state_dir)
    expect(readFileSync(join(r.json.state_dir, 'stdout.log'), 'utf8')).toContain(evil)
    expect(existsSync(canary)).toBe(false)
  })

  it('refuses bad ids, unknown Recipes, undeclared args and bad values with exit 2, creating nothing', () => {
    for (const args of [
      ['run', '--name', '../escape', '--', 'true'],
      ['run', '--name', 'a/b', '--', 'true'],
      ['run', '--name', 'x'.repeat(200), '--', 'true'],
      ['run', '--name', '.hidden', '--', 'true'],
      ['run', '--name=-dash', '--', 'true'],
      ['run', 'no-such-recipe'],
      ['run', 'hello', 'nosucharg=1'],
      ['run', 'sleep', 'seconds=abc'],
      ['run', '--timeout', 'soon', '--', 'true'],
      ['run', '--'],
    ]) {
      const r = actors(home, ['run', '--json', ...args.slice(1)])
      expect(r.code, args.join(' ')).toBe(2)
      expect(r.stderr, args.join(' ')).toMatch(/^actors: /)
      expect(r.stderr).not.toMatch(/\n\s+at .*\(/)
      expect(r.json?.error?.exit_code).toBe(2)
    }
    expect(existsSync(join(home, 'runs')) ? readdirSync(join(home, 'runs')) : []).toEqual([])
  })

  it('refuses a working directory that does not exist before anything starts', () => {
    const flag = actors(home, ['run', '--json', '--cwd', join(work, 'nope'), '--', 'true'])
    expect(flag.code).toBe(2)
    expect(flag.stderr).toContain(`--cwd ${join(work, 'nope')}`)
    writeFileSync(join(work, 'away.yaml'), `template: [true]\ncwd: ${join(work, 'gone')}\n`)
    const recipe = actors(home, ['run', '--json', join(work, 'away.yaml')])
    expect(recipe.code).toBe(2)
    expect(recipe.stderr).toMatch(/away\.yaml: field "cwd" .*gone/)
    expect(existsSync(join(home, 'runs')) ? readdirSync(join(home, 'runs')) : []).toEqual([])
  })

  it('refuses a launch whose run.json would be too large to read back, creating nothing', () => {
    const r = actors(home, ['run', '--json', '--', 'echo', ...Array(24).fill('x'.repeat(30_000))])
    expect(r.code).toBe(2)
    expect(r.json.error.message).toMatch(/run\.json would be \d+ bytes/)
    expect(existsSync(join(home, 'runs')) ? readdirSync(join(home, 'runs')) : []).toEqual([])
  })

  it('refuses a state root that is not a directory (usage, 2) and a file where its runs/ belongs (damage, 1), naming it', () => {
    const file = join(work, 'not-a-dir')
    writeFileSync(file, '')
    for (const [bad, code] of [
      [file, 2],
      [join(work), 1],
    ] as const) {
      if (bad === work) writeFileSync(join(work, 'runs'), '')
      const r = actors(bad, ['run', '--json', '--', 'true'])
      expect(r.code).toBe(code)
      expect(r.stderr).toContain(join(bad, 'runs'))
      expect(r.stderr).not.toContain('internal error')
    }
  })

  it('refuses a broken Recipe file naming the file, and a huge one', () => {
    const dir = join(work, 'recipes')
    execFileSync('mkdir', ['-p', dir])
    writeFileSync(join(dir, 'broken.yaml'), 'template: [echo, "unterminated\n  args: {')
    writeFileSync(join(dir, 'huge.yaml'), `description: "${'x'.repeat(400_000)}"\ntemplate: [true]\n`)
    const broken = actors(home, ['run', '--recipes', dir, 'broken'])
    expect(broken.code).toBe(2)
    expect(broken.stderr).toContain('broken.yaml')
    const huge = actors(home, ['run', '--recipes', dir, 'huge'])
    expect(huge.code).toBe(2)
    expect(huge.stderr).toContain('huge.yaml')
  })

  it('relaunching an explicit id makes a new generation; a live id is refused with exit 5', async () => {
    const first = actors(home, ['run', '--name', 'again', '--json', '--', 'sleep', '30'])
    expect(first.code).toBe(0)
    const busy = actors(home, ['run', '--name', 'again', '--json', '--', 'true'])
    expect(busy.code).toBe(5)
    await terminateSupervisor(first.json.state_dir)
    const second = actors(home, ['run', '--name', 'again', '--json', '--', 'true'])
    expect(second.code).toBe(0)
    expect(second.json.run_instance_id).not.toBe(first.json.run_instance_id)
    const result = await waitForResult(second.json.state_dir)
    expect(result.run_instance_id).toBe(second.json.run_instance_id)
  })

  it('simultaneous launches of one --name (fresh, then a relaunch) start exactly one Run each time', async () => {
    for (const round of [0, 1]) {
      // The winner runs until the test opens its gate, so a launch that comes late on a slow machine still finds it live.
      const gate = join(work, `gate-${round}`)
      const launches = await Promise.all(
        Array.from({length: 4}, () =>
          actorsAsync(home, [
            'run',
            '--name',
            'one',
            '--json',
            '--',
            'sh',
            '-c',
            `echo $ACTORS_RUN_INSTANCE; while [ ! -e ${gate} ]; do sleep 0.05; done`,
          ]),
        ),
      )
      writeFileSync(gate, '')
      const won = launches.filter((l) => l.code === 0)
      expect(won, `round ${round}`).toHaveLength(1)
      expect(launches.filter((l) => l.code !== 0).every((l) => l.code === 5)).toBe(true)
      const result = await waitForResult(join(home, 'runs', 'one'))
      expect(result.run_instance_id).toBe(won[0].json.run_instance_id)
      expect(readFileSync(join(home, 'runs', 'one', 'stdout.log'), 'utf8')).toBe(`${won[0].json.run_instance_id}\n`)
    }
  })

  it('relaunches an id whose supervisor and command were SIGKILLed without waiting on its own lock', async () => {
    const first = actors(home, ['run', '--name', 'lost', '--json', '--', 'sleep', '30'])
    const meta = await waitFor(
      () =>
        readJson(join(first.json.state_dir, 'run.json')).child_pid && readJson(join(first.json.state_dir, 'run.json')),
    )
    process.kill(meta.pid, 'SIGKILL')
    process.kill(-meta.pgid, 'SIGKILL') // the command's wrapper and the command: nothing records the end
    await waitFor(() => !processAlive(meta.pid))
    const started = Date.now()
    const again = actors(home, ['run', '--name', 'lost', '--json', '--', 'true'])
    expect(again.code, again.stderr).toBe(0)
    expect(Date.now() - started).toBeLessThan(5000)
    expect(await waitForResult(first.json.state_dir)).toMatchObject({
      status: 'done',
      run_instance_id: again.json.run_instance_id,
    })
  })

  it('times out by terminating the whole process tree, grandchildren included', async () => {
    const pidFile = join(work, 'pids')
    // A child that forks a grandchild and a setsid'd process, then all sleep.
    const script = `sleep 300 & echo $! >> ${pidFile}; setsid sleep 301 & echo $! >> ${pidFile}; (trap '' TERM; sleep 302) & echo $! >> ${pidFile}; wait`
    const r = actors(home, ['run', '--json', '--timeout', '700ms', '--', 'sh', '-c', script])
    expect(r.code).toBe(0)
    const pids = await waitFor(() => {
      const text = existsSync(pidFile) ? readFileSync(pidFile, 'utf8').trim().split('\n') : []
      return text.length === 3 ? text.map(Number) : undefined
    })
    const meta = readJson(join(r.json.state_dir, 'run.json'))
    expect(meta.kill_grace_ms).toBe(5000)
    const result = await waitForResult(r.json.state_dir, 20_000)
    expect(result).toMatchObject({status: 'failed', reason: 'timeout'})
    // The result is written once the tree is gone: the TERM-ignoring one only after its SIGKILL, kill_grace later.
    expect(
      pids.filter((pid) => processAlive(pid)),
      'descendants alive when result.json appeared',
    ).toEqual([])
    expect(Date.parse(result.completed_at) - Date.parse(result.started_at)).toBeGreaterThanOrEqual(5000)
  })

  it('a timeout sends SIGTERM to a setsid descendant too, well before kill_grace runs out', async () => {
    const marker = join(work, 'termed')
    const pidFile = join(work, 'setsid.pid')
    const recipes = join(work, 'recipes')
    mkdirSync(recipes)
    // The setsid'd shell left the command's process group; once its TERM trap is set it writes its pid, and
    // the trap records SIGTERM. If the timeout signalled the group alone, only SIGKILL would reach it, after
    // the long kill_grace, and the trap would never run.
    // It never ends on its own (a loop, not one `wait` that returns once its sleep took its own SIGTERM), so
    // only the trap or the late SIGKILL can end it.
    const script = `setsid sh -c 'trap "echo term > ${marker}; exit 0" TERM; echo $$ > ${pidFile}; while :; do sleep 1; done' & sleep 300`
    writeFileSync(
      join(recipes, 'graceful.yaml'),
      [`template: [sh, -c, ${JSON.stringify(script)}]`, 'kill_grace: 20s', ''].join('\n'),
    )
    const r = actors(home, ['run', 'graceful', '--recipes', recipes, '--timeout', '5s', '--json'])
    expect(r.code, r.stderr).toBe(0)
    expect(readJson(join(r.json.state_dir, 'run.json')).kill_grace_ms).toBe(20_000)
    const pid = await waitFor(
      () => existsSync(pidFile) && Number(readFileSync(pidFile, 'utf8')),
      20_000,
      'the setsid shell to set its trap',
    )
    const result = await waitForResult(r.json.state_dir, 45_000)
    expect(result).toMatchObject({status: 'failed', reason: 'timeout'})
    // The trap may run just after the result is written: wait for the marker or for the shell to be gone.
    await waitFor(() => existsSync(marker) || !processAlive(pid), 45_000, 'the setsid shell to take SIGTERM or die')
    expect(existsSync(marker), 'the setsid descendant got SIGTERM (its trap wrote the marker)').toBe(true)
    expect(readFileSync(marker, 'utf8')).toBe('term\n')
    // ...and got it before kill_grace ran out, counted from the timeout.
    const trace = readFileSync(join(r.json.state_dir, 'trace.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line))
    const timedOut = trace.find((e) => e.kind === 'runtime.timeout')
    expect(timedOut).toBeDefined()
    expect(statSync(marker).mtimeMs).toBeLessThan(Date.parse(timedOut.ts) + 20_000)
    await waitFor(() => !processAlive(pid), 10_000, 'the setsid shell gone')
  })

  it('retries failed attempts up to the total and records them', async () => {
    const counter = join(work, 'count')
    const r = actors(home, [
      'run',
      '--json',
      '--retry',
      '3',
      '--',
      'sh',
      '-c',
      `echo x >> ${counter}; test $(wc -l < ${counter}) -ge 2`,
    ])
    const result = await waitForResult(r.json.state_dir)
    expect(result).toMatchObject({status: 'done', attempts: 2, exit_code: 0})
    const failing = actors(home, ['run', '--json', '--retry', '2', '--', 'false'])
    expect(await waitForResult(failing.json.state_dir)).toMatchObject({status: 'failed', attempts: 2})
  })

  it('runs a sequence Recipe and records its artifact with bytes and sha256', async () => {
    const r = actors(home, ['run', '--json', 'demo', 'seconds=0', 'message=hi there'])
    expect(r.code, r.stderr).toBe(0)
    const result = await waitForResult(r.json.state_dir)
    expect(result.status).toBe('done')
    const artifact = result.artifacts.find((a: any) => a.name === 'report')
    const content = readFileSync(artifact.path)
    expect(artifact.bytes).toBe(content.length)
    expect(artifact.sha256).toBe(execFileSync('sha256sum', [artifact.path], {encoding: 'utf8'}).split(' ')[0])
  })

  it('a paused sequence does not start its next step until resumed', async () => {
    const marker = join(work, 'second-started')
    // The first step lasts until the test opens its gate, so the pause always lands while it runs.
    const gate = join(work, 'first-may-end')
    writeFileSync(
      join(work, 'seq.yaml'),
      `description: two steps\nsequence:\n  - [sh, -c, 'while [ ! -e ${gate} ]; do sleep 0.05; done']\n  - [touch, ${marker}]\n`,
    )
    const r = actors(home, ['run', '--json', join(work, 'seq.yaml')])
    expect(r.code, r.stderr).toBe(0)
    await waitFor(() => readJson(join(r.json.state_dir, 'run.json')).child_pid)
    expect(actors(home, ['control', r.json.run, 'pause']).code).toBe(0)
    writeFileSync(gate, '')
    await new Promise((resolve) => setTimeout(resolve, 1500))
    expect(existsSync(marker)).toBe(false)
    expect(actors(home, ['inspect', r.json.run, '--json']).json.status).toBe('paused')
    expect(actors(home, ['control', r.json.run, 'resume']).code).toBe(0)
    expect(await waitForResult(r.json.state_dir)).toMatchObject({status: 'done'})
    expect(existsSync(marker)).toBe(true)
  })

  it('records spawn failure of a missing command as failed', async () => {
    const r = actors(home, ['run', '--json', '--', 'no-such-command-xyz'])
    expect(await waitForResult(r.json.state_dir)).toMatchObject({
      status: 'failed',
      reason: 'spawn_failed',
      exit_code: 127,
    })
  })

  it('--wait blocks until the end and exits 1 when the Run failed', () => {
    const ok = actors(home, ['run', '--wait', '--json', '--', 'true'])
    expect(ok.code).toBe(0)
    const bad = actors(home, ['run', '--wait', '--json', '--', 'false'])
    expect(bad.code).toBe(1)
  })

  it('dozens of simultaneous launches get distinct ids and every file parses', async () => {
    const launches = await Promise.all(
      Array.from({length: 24}, () => actorsAsync(home, ['run', '--json', '--', 'true'])),
    )
    expect(launches.every((l) => l.code === 0)).toBe(true)
    const ids = launches.map((l) => l.json.run)
    expect(new Set(ids).size).toBe(24)
    for (const l of launches) await waitForResult(l.json.state_dir)
    for (const id of ids) {
      expect(readJson(join(home, 'runs', id, 'run.json')).status).toBe('done')
      expect(readJson(join(home, 'runs', id, 'result.json')).status).toBe('done')
    }
    const listing = actors(home, ['inspect', '--json'])
    expect(listing.json.runs).toHaveLength(24)
    expect(listing.json.damaged).toEqual([])
  })
})

describe('bin/actors as a command', () => {
  it('runs through a symlink in a directory whose name has a space (as npm links bin/actors)', () => {
    const linkDir = join(work, 'node modules', '.bin')
    mkdirSync(linkDir, {recursive: true})
    symlinkSync(BIN, join(linkDir, 'actors'))
    const listed = spawnSync(join(linkDir, 'actors'), ['inspect', '--json'], {env: cliEnv(home), encoding: 'utf8'})
    expect(listed.stderr).toBe('')
    expect(listed.status).toBe(0)
    expect(JSON.parse(listed.stdout)).toEqual({runs: [], damaged: []})
  })

  it('hands the Run the environment it was given (NODE_EXTRA_CA_CERTS included, nothing of its own added)', () => {
    const caFile = '/nonexistent/actors-test-ca.pem'
    const probe = 'printf "%s|%s" "${NODE_EXTRA_CA_CERTS-unset}" "${ACTORS_NODE_EXTRA_CA_CERTS-unset}"'
    const env = cliEnv(home, {NODE_EXTRA_CA_CERTS: caFile})
    const launched = spawnSync(BIN, ['run', '--json', '--wait', '--', 'sh', '-c', probe], {env, encoding: 'utf8'})
    expect(launched.status).toBe(0)
    expect(JSON.parse(launched.stdout).rows[0].output).toBe(`${caFile}|unset`)
  })
})

describe('reconciliation', () => {
  it('a Run whose supervisor and command were SIGKILLed becomes exited on the next read, with a result', async () => {
    const r = actors(home, ['run', '--json', '--', 'sleep', '30'])
    const dir = r.json.state_dir
    await waitFor(() => readJson(join(dir, 'run.json')).child_pid)
    const meta = readJson(join(dir, 'run.json'))
    process.kill(meta.pid, 'SIGKILL')
    process.kill(-meta.pgid, 'SIGKILL') // the command's wrapper and the command: no end is recorded
    await waitFor(() => !processAlive(meta.pid))
    const shown = actors(home, ['inspect', r.json.run, '--json'])
    expect(shown.json.status).toBe('exited')
    expect(readJson(join(dir, 'result.json'))).toMatchObject({status: 'exited', reason: 'supervisor_lost'})
  })

  it('a live unrelated process holding the recorded supervisor pid is not the supervisor: the Run becomes exited, nothing is signalled', async () => {
    const r = actors(home, ['run', '--json', '--name', 'recycled', '--', 'true'])
    await waitForResult(r.json.state_dir)
    const file = join(r.json.state_dir, 'run.json')
    const meta = readJson(file)
    // The pids were recycled: unrelated processes (each in its own group) now hold the pids recorded for
    // the supervisor and for the command and its group, but they started at other times than recorded.
    const [pid, commandPid] = [0, 1].map(() => {
      const stranger = spawn('sleep', ['300'], {detached: true, stdio: 'ignore'})
      strangers.push(stranger)
      return stranger.pid!
    })
    await waitFor(() => processState(pid) === 'S' && processState(commandPid) === 'S', 10_000, 'the strangers asleep')
    const {status: _s, ended_at: _e, exit_code: _x, duration_ms: _d, ...live} = meta
    writeFileSync(
      file,
      JSON.stringify({
        ...live,
        status: 'running',
        pid,
        process_identity: {...meta.process_identity, pid},
        child_pid: commandPid,
        pgid: commandPid,
        children_processes: [
          {
            pid: commandPid,
            pgid: commandPid,
            identity: {...meta.children_processes[0].identity, pid: commandPid},
            step: 0,
          },
        ],
      }),
    )
    rmSync(join(r.json.state_dir, 'result.json'))
    rmSync(join(r.json.state_dir, 'exit-0.json')) // the end its command recorded (SPEC: Supervision): none here
    const status = actors(home, ['control', 'recycled', 'status', '--json'])
    expect(status.json, status.stderr).toMatchObject({status: 'exited', supervisor_alive: false})
    expect(actors(home, ['inspect', 'recycled', '--json']).json).toMatchObject({status: 'exited'})
    expect(readJson(join(r.json.state_dir, 'result.json'))).toMatchObject({status: 'exited', reason: 'supervisor_lost'})
    // Nothing of the Run is alive, so there is nothing to end: and the strangers must not be touched.
    for (const action of ['pause', 'stop', 'kill']) {
      const ended = actors(home, ['control', 'recycled', action, '--json'])
      expect(ended.code, `${action}: ${ended.stderr}`).toBe(3)
    }
    expect([processState(pid), processState(commandPid)]).toEqual(['S', 'S'])
    expect(readJson(file).status).toBe('exited')
  })

  it('a run.json with an unknown status or malformed process records fails closed naming the file', async () => {
    const r = actors(home, ['run', '--json', '--name', 'odd', '--', 'true'])
    // Let the supervisor finish first: its last write to run.json would replace the damaged one.
    await waitForResult(r.json.state_dir)
    const file = join(r.json.state_dir, 'run.json')
    const meta = readJson(file)
    for (const change of [{status: 'zombie'}, {status: 'running', children_processes: [null, 1]}]) {
      writeFileSync(file, JSON.stringify({...meta, ...change}))
      for (const args of [
        ['inspect', 'odd'],
        ['control', 'odd', 'status'],
      ]) {
        const shown = actors(home, args)
        expect(shown.code, `${JSON.stringify(change)} ${args.join(' ')}`).toBe(1)
        expect(shown.stderr).toContain(file)
        expect(shown.stderr).not.toContain('internal error')
      }
    }
  })

  it('the read that finds a supervisor lost leaves its command running and a new supervisor takes it over; a stop ends it', async () => {
    const r = actors(home, ['run', '--json', '--', 'sh', '-c', 'sleep 300 & wait'])
    const dir = r.json.state_dir
    await waitFor(() => readJson(join(dir, 'run.json')).child_pid)
    const meta = readJson(join(dir, 'run.json'))
    process.kill(meta.pid, 'SIGKILL')
    await waitFor(() => !processAlive(meta.pid))
    expect(processAlive(meta.child_pid)).toBe(true)
    // SPEC: Supervision, Containment: a lost supervisor is not a lost Run; the unit goes on, taken over.
    expect(actors(home, ['inspect', r.json.run, '--json']).json.status).toBe('running')
    expect(processAlive(meta.child_pid)).toBe(true)
    expect(readJson(join(dir, 'run.json')).pid).not.toBe(meta.pid)
    expect(actors(home, ['control', r.json.run, 'stop']).code).toBe(0)
    expect(await waitForResult(dir)).toMatchObject({status: 'cancelled'})
    expect(processAlive(meta.child_pid)).toBe(false)
  })

  it("the tests' removeHome ends live Runs and what a lost supervisor left running before removing the root", async () => {
    const pidFile = join(work, 'pids')
    const live = actors(home, ['run', '--json', '--', 'sleep', '300'])
    const lost = actors(home, ['run', '--json', '--', 'sh', '-c', `setsid sleep 301 & echo $! > ${pidFile}; sleep 302`])
    const metas = await waitFor(
      () => {
        const both = [live, lost].map((r) => readJson(join(r.json.state_dir, 'run.json')))
        return both.every((m) => m.child_pid) && existsSync(pidFile) && readFileSync(pidFile, 'utf8').trim() !== ''
          ? both
          : undefined
      },
      15_000,
      'both commands started',
    )
    process.kill(metas[1].pid, 'SIGKILL')
    const pids = [...metas.flatMap((m) => [m.pid, m.child_pid]), Number(readFileSync(pidFile, 'utf8'))]
    removeHome(home)
    expect(existsSync(home)).toBe(false)
    await waitFor(() => pids.every((pid) => !processAlive(pid)), 10_000, 'every supervisor and command gone')
  })

  it('corrupt run.json fails closed naming the file; the listing goes on', () => {
    const good = actors(home, ['run', '--json', '--name', 'good', '--', 'true'])
    expect(good.code).toBe(0)
    execFileSync('mkdir', ['-p', join(home, 'runs', 'bad')])
    writeFileSync(join(home, 'runs', 'bad', 'run.json'), '{"schema": "actors-run-v1", "run": ')
    const one = actors(home, ['inspect', 'bad'])
    expect(one.code).toBe(1)
    expect(one.stderr).toContain(join(home, 'runs', 'bad', 'run.json'))
    const all = actors(home, ['inspect', '--json'])
    expect(all.code).toBe(0)
    expect(all.json.runs.map((x: any) => x.run)).toEqual(['good'])
    expect(all.json.damaged[0].state_dir).toBe(join(home, 'runs', 'bad'))
  })
})

describe('inspect, logs, emit, prune', () => {
  it('filters by status and refuses unknown statuses', async () => {
    const a = actors(home, ['run', '--json', '--', 'true'])
    const b = actors(home, ['run', '--json', '--', 'sleep', '30'])
    await waitForResult(a.json.state_dir)
    const running = actors(home, ['inspect', '--status', 'running', '--json'])
    expect(running.json.runs.map((x: any) => x.run)).toEqual([b.json.run])
    expect(actors(home, ['inspect', '--status', 'sleepy']).code).toBe(2)
    await terminateSupervisor(b.json.state_dir)
  })

  it('logs prints stdout, stderr and tails; follow streams until the end', async () => {
    const r = actors(home, [
      'run',
      '--json',
      '--',
      'sh',
      '-c',
      'for i in 1 2 3 4 5; do echo line$i; done; echo oops >&2',
    ])
    await waitForResult(r.json.state_dir)
    expect(actors(home, ['logs', r.json.run]).stdout).toBe('line1\nline2\nline3\nline4\nline5\n')
    expect(actors(home, ['logs', r.json.run, '--tail', '2']).stdout).toBe('line4\nline5\n')
    expect(actors(home, ['logs', r.json.state_dir, '--stderr']).stdout).toBe('oops\n')
    const slow = actors(home, ['run', '--json', '--', 'sh', '-c', 'echo a; sleep 0.4; echo b; exit 4'])
    const followed = actors(home, ['logs', slow.json.run, '--follow', '--json'])
    const events = followed.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l))
    expect(
      events
        .filter((e) => e.type === 'output')
        .map((e) => e.text)
        .join(''),
    ).toBe('a\nb\n')
    expect(events.at(-1)).toMatchObject({type: 'result', status: 'failed', exit_code: 4})
    expect(followed.code).toBe(1)
  })

  it('logs fails closed naming the file when a log is a directory', async () => {
    const r = actors(home, ['run', '--json', '--', 'true'])
    await waitForResult(r.json.state_dir)
    const file = join(r.json.state_dir, 'stdout.log')
    rmSync(file)
    mkdirSync(file)
    for (const args of [[], ['--tail', '2'], ['--follow']]) {
      const shown = actors(home, ['logs', r.json.run, ...args])
      expect(shown.code, args.join(' ')).toBe(1)
      expect(shown.stderr).toContain(`${file}: is a directory`)
    }
  })

  it('follow loses nothing after bytes that are not UTF-8 or a character split across writes', async () => {
    const r = actors(home, [
      'run',
      '--json',
      '--',
      'sh',
      '-c',
      "sleep 0.3; printf '\\351\\351 latin1\\n'; sleep 0.3; printf '\\303'; sleep 0.3; printf '\\251 split\\n'; sleep 0.3; echo last",
    ])
    const followed = actors(home, ['logs', r.json.run, '--follow', '--json'])
    const text = followed.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l))
      .filter((e) => e.type === 'output')
      .map((e) => e.text)
      .join('')
    expect(text).toBe('\uFFFD\uFFFD latin1\né split\nlast\n')
  })

  it('emit appends Trace events and usage from inside a Run, and refuses outside one', async () => {
    const r = actors(home, [
      'run',
      '--json',
      '--',
      'sh',
      '-c',
      'actors emit build.step --summary "compiled" --data \'{"files":3}\' && actors emit usage --tokens 120 && actors emit usage --prompt-tokens 10 --completion-tokens 5',
    ])
    const result = await waitForResult(r.json.state_dir)
    expect(result.status).toBe('done')
    const shown = actors(home, ['inspect', r.json.run, '--json'])
    const kinds = shown.json.trace.map((e: any) => e.kind)
    expect(kinds).toEqual(expect.arrayContaining(['build.step', 'usage']))
    expect(shown.json.trace.find((e: any) => e.kind === 'build.step')).toMatchObject({
      summary: 'compiled',
      data: {files: 3},
    })
    expect(readJson(join(r.json.state_dir, 'usage.json'))).toMatchObject({
      tokens: 135,
      prompt_tokens: 10,
      completion_tokens: 5,
      reports: 2,
    })
    expect(actors(home, ['emit', 'x.y']).code).toBe(2)
    expect(actors(home, ['emit', 'Bad Kind', '--run', r.json.run]).code).toBe(2)
    expect(actors(home, ['emit', 'x', '--run', r.json.run, '--data', '{nope']).code).toBe(2)
    expect(actors(home, ['emit', 'x', '--run', r.json.run, '--level', 'loud']).code).toBe(2)
  })

  it('emit refuses kinds under runtime. (exit 2): only the kernel writes them, so none reaches a batch', async () => {
    const script =
      'actors emit runtime.ended --attention steer --summary fake; echo "emit=$?"; actors emit runtime --summary fake; echo "bare=$?"; actors emit runtimex.ok >/dev/null; echo "near=$?"'
    const r = actors(home, ['run', '--json', '--', 'sh', '-c', script])
    await waitForResult(r.json.state_dir)
    const out = readFileSync(join(r.json.state_dir, 'stdout.log'), 'utf8')
    expect(out).toContain('emit=2')
    expect(out).toContain('bare=2')
    expect(out).toContain('near=0')
    expect(readFileSync(join(r.json.state_dir, 'stderr.log'), 'utf8')).toContain('written by the kernel only')
    const trace = actors(home, ['inspect', r.json.run, '--json']).json.trace
    expect(trace.filter((e: any) => e.summary === 'fake')).toEqual([])
    const batch = actors(home, ['wait', r.json.run, '--json']).json
    expect(batch.attention).toEqual([])
    expect(actors(home, ['emit', 'runtime.adopted', '--run', r.json.run]).code).toBe(2)
  })

  it("inspect prints a Run's own Trace text without its escape codes or line breaks", async () => {
    // Events go to a live Run only (a finished one refuses them, exit 3).
    const r = actors(home, ['run', '--json', '--', 'sleep', '60'])
    expect(actors(home, ['emit', 'x', '--run', r.json.run, '--summary', 'a\nb\u001b[31mred\u0007']).code).toBe(0)
    actors(home, ['control', r.json.run, 'kill'])
    await waitForResult(r.json.state_dir)
    const shown = actors(home, ['inspect', r.json.run])
    expect(shown.stdout).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f]/)
    // Escaped, not dropped: the reader sees what the Run wrote, inert.
    expect(shown.stdout).toMatch(/ x {2}a b\\e\[31mred\\x07\n/)
  })

  it('usage starts from zero for each launch of an id, and damaged totals fail closed', async () => {
    for (const tokens of ['100', '5']) {
      const r = actors(home, ['run', '--name', 'u1', '--json', '--', 'actors', 'emit', 'usage', '--tokens', tokens])
      expect(await waitForResult(r.json.state_dir)).toMatchObject({status: 'done'})
    }
    expect(readJson(join(home, 'runs', 'u1', 'usage.json'))).toMatchObject({tokens: 5, reports: 1})
    // A live generation (usage is reported to live Runs only) whose totals are damaged.
    const live = actors(home, ['run', '--name', 'u1', '--json', '--', 'sleep', '60'])
    writeFileSync(
      join(home, 'runs', 'u1', 'usage.json'),
      '{"tokens": "5", "prompt_tokens": 0, "completion_tokens": 0, "reports": 1}',
    )
    const bad = actors(home, ['emit', 'usage', '--tokens', '1', '--run', 'u1'])
    expect(bad.code).toBe(1)
    expect(bad.stderr).toContain(join(home, 'runs', 'u1', 'usage.json'))
    actors(home, ['control', 'u1', 'kill'])
    await waitForResult(live.json.state_dir)
  })

  it('prune deletes terminal Runs only', async () => {
    const done = actors(home, ['run', '--json', '--', 'true'])
    const live = actors(home, ['run', '--json', '--', 'sleep', '30'])
    await waitForResult(done.json.state_dir)
    const named = actors(home, ['prune', live.json.run, '--json'])
    expect(named.code).toBe(5)
    expect(named.json.skipped[0]).toMatchObject({run: live.json.run, problem: 'live'})
    const missing = actors(home, ['prune', 'no-such-run', '--json'])
    expect(missing.code).toBe(4)
    expect(missing.json.skipped[0]).toMatchObject({run: 'no-such-run', problem: 'not_found'})
    const all = actors(home, ['prune', '--json'])
    expect(all.json.pruned).toEqual([done.json.run])
    expect(existsSync(done.json.state_dir)).toBe(false)
    expect(existsSync(live.json.state_dir)).toBe(true)
    await terminateSupervisor(live.json.state_dir)
  })

  it('prune --older-than goes by when each Run ended, and removes a whole state dir, subdirectories and links included', () => {
    const hour = 3600_000
    const old = writeFinishedRun(home, 'old', {ended: new Date(Date.now() - 3 * hour).toISOString()})
    writeFinishedRun(home, 'recent', {ended: new Date(Date.now() - 60_000).toISOString()})
    // Written before run.json mirrored the end: result.json says when it ended.
    const legacy = writeFinishedRun(home, 'legacy', {
      ended: new Date(Date.now() - 3 * hour).toISOString(),
      meta: {ended_at: undefined},
    })
    writeFinishedRun(home, 'legacy-recent', {
      ended: new Date(Date.now() - 3 * hour).toISOString(),
      meta: {ended_at: undefined},
      result: {completed_at: new Date().toISOString()},
    })
    // What a state dir can hold besides its files: an archived generation, a link out of the state root (never followed), a fifo.
    mkdirSync(join(old, 'generations', '1'), {recursive: true})
    writeFileSync(join(old, 'generations', '1', 'run.json'), '{}')
    const outside = join(tempDir('actors-outside-'), 'keep.txt')
    writeFileSync(outside, 'kept')
    symlinkSync(outside, join(old, 'link-out'))
    symlinkSync(join(outside, '..'), join(old, 'dir-link-out'))
    execFileSync('mkfifo', [join(old, 'fifo')])
    // A finished Run whose result.json is damaged is kept and named (exit 1), not deleted unseen.
    const damaged = writeFinishedRun(home, 'damaged', {ended: new Date(Date.now() - 3 * hour).toISOString()})
    writeFileSync(join(damaged, 'result.json'), '{"status": "do')
    const pruned = actors(home, ['prune', '--older-than', '1h', '--json'])
    expect(pruned.code, pruned.stderr).toBe(1)
    expect(pruned.json.pruned.sort()).toEqual(['legacy', 'old'])
    expect(pruned.json.skipped).toEqual([
      expect.objectContaining({run: 'damaged', problem: 'damaged', reason: expect.stringContaining('result.json')}),
    ])
    expect(existsSync(damaged)).toBe(true)
    expect(existsSync(old)).toBe(false)
    expect(existsSync(legacy)).toBe(false)
    expect(readFileSync(outside, 'utf8')).toBe('kept')
    expect(readdirSync(home).filter((name) => name.startsWith('.pruning-'))).toEqual([])
    expect(
      readdirSync(join(home, 'runs'))
        .filter((name) => !name.startsWith('.'))
        .sort(),
    ).toEqual(['damaged', 'legacy-recent', 'recent'])
    removeDir(join(outside, '..'))
  })
})
