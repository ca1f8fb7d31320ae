/**
 * Red-team pass 16, on the supervision host as the default: one process
 * supervises every Run of a state root, so what a Run does to it (kill it,
 * send it a strange request) or what it inherits from whoever started it
 * reaches its neighbours. Real Runs as the adversary, under cgroup and
 * tracked containment where it applies.
 */
import {spawn, spawnSync} from 'node:child_process'
import {connect, type Socket} from 'node:net'
import {mkdirSync, readdirSync, readFileSync, readlinkSync, symlinkSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {
  actors,
  BIN,
  CONTAINMENT_MODES,
  cliEnv,
  commandStarted,
  homesPerTest,
  processAlive,
  readJson,
  waitFor,
} from './helpers.js'

const newHome = homesPerTest('actors-trust-host-default-')
const HOST = {ACTORS_SUPERVISION: 'host'}

function launch(home: string, args: string[], env: NodeJS.ProcessEnv): {run: string; state_dir: string; pid: number} {
  const r = actors(home, ['run', '--json', ...args], {env})
  expect(r.code, r.stderr).toBe(0)
  return r.json
}

/** The live host of `home` (supervision/host.json). */
const hostPid = (home: string): number => readJson(join(home, 'supervision', 'host.json')).identity.pid

/** A shell line that writes a forged end (`done`, exit 0) for instance `$1` into result.json at `$2`. */
const FORGE = `printf '{"status":"done","exit_code":0,"run_instance_id":"%s"}' "$1" > "$2"`
/** A shell line that SIGKILLs the state root's host, read from its record. */
const KILL_HOST = `kill -9 $(sed 's/.*"pid":\\([0-9]*\\).*/\\1/' "$ACTORS_HOME/supervision/host.json")`

describe.each(CONTAINMENT_MODES)('a forged result.json and a killed host ($mode)', ({env, skip}) => {
  it.skipIf(skip)(
    'a Run that writes its own end and kills the host still times out: it is adopted, ended at its deadline, and its end replaces the claim',
    async () => {
      const home = newHome()
      const script = `sleep 0.3; ${FORGE}; ${KILL_HOST}; sleep 30`
      const own = ['"$ACTORS_RUN_INSTANCE"', '"$ACTORS_STATE_DIR/result.json"']
      const run = launch(
        home,
        ['--name', 'liar', '--timeout', '3s', '--', 'sh', '-c', `set -- ${own.join(' ')}; ${script}`],
        {
          ...env,
          ...HOST,
        },
      )
      const started = await commandStarted(run.state_dir)
      const host = run.pid
      await waitFor(() => !processAlive(host), 10_000, 'the host killed by the Run')
      // Read once the host is gone: the claim is no end while the unit lives, so the Run is adopted.
      await waitFor(() => readJson(join(run.state_dir, 'result.json')).status === 'done', 10_000, 'the forged end')
      expect(actors(home, ['inspect', 'liar', '--json'], {env}).code).toBe(0)
      const adopter = readJson(join(run.state_dir, 'run.json')).pid
      expect(adopter).not.toBe(host)
      expect(processAlive(adopter)).toBe(true)
      const waited = actors(home, ['wait', 'liar', '--json', '--timeout', '20s'], {env, timeout: 30_000})
      expect(waited.code, waited.stdout).toBe(1)
      const result = readJson(join(run.state_dir, 'result.json'))
      expect(result).toMatchObject({status: 'failed', reason: 'timeout'})
      expect(started.children_processes.every((p: {pid: number}) => !processAlive(p.pid))).toBe(true)
    },
    60_000,
  )

  it.skipIf(skip)(
    "a neighbour that forges a Run's result.json and kills the host: the end the Run's unit recorded is its end, the claim named",
    async () => {
      const home = newHome()
      const victim = launch(home, ['--name', 'victim', '--', 'sh', '-c', 'sleep 1.5; exit 5'], {...env, ...HOST})
      const instance = readJson(join(victim.state_dir, 'run.json')).run_instance_id
      const forged = join(victim.state_dir, 'result.json')
      // The neighbour kills the host at once and writes the forged end once the victim's command has ended.
      const attacker = `${KILL_HOST}; sleep 2.5; ${FORGE}`
      launch(home, ['--name', 'att', '--', 'sh', '-c', attacker, 'sh', instance, forged], {...env, ...HOST})
      await waitFor(() => readJson(forged).status === 'done', 15_000, 'the forged end')
      const waited = actors(home, ['wait', 'victim', '--json'], {env, timeout: 30_000})
      expect(waited.code, waited.stdout).toBe(1)
      expect(readJson(forged)).toMatchObject({
        status: 'failed',
        exit_code: 5,
        replaced_result: {status: 'done', exit_code: 0},
      })
    },
    60_000,
  )
})

describe.each(CONTAINMENT_MODES)('a damaged result.json and a killed host ($mode)', ({env, skip}) => {
  for (const [name, text] of [
    ['not JSON', '{not json'],
    ['a status "running"', '{"status":"running","run_instance_id":"INSTANCE"}'],
  ])
    it.skipIf(skip)(
      `${name}: the Run is taken over and times out, and a wait delivers it`,
      async () => {
        const home = newHome()
        const victim = launch(home, ['--name', 'victim', '--timeout', '3s', '--', 'sleep', '30'], {...env, ...HOST})
        await commandStarted(victim.state_dir)
        const instance = readJson(join(victim.state_dir, 'run.json')).run_instance_id
        const damage = `printf '%s' '${text.replace('INSTANCE', instance)}' > '${join(victim.state_dir, 'result.json')}'; ${KILL_HOST}`
        launch(home, ['--name', 'att', '--', 'sh', '-c', damage], {...env, ...HOST})
        await waitFor(() => !processAlive(victim.pid), 10_000, 'the host killed')
        const waited = actors(home, ['wait', 'victim', '--json', '--timeout', '20s'], {env, timeout: 30_000})
        expect(waited.code, waited.stdout + waited.stderr).toBe(1)
        expect(readJson(join(victim.state_dir, 'result.json'))).toMatchObject({status: 'failed', reason: 'timeout'})
      },
      40_000,
    )
})

describe('a file size limit a neighbour sets on a supervisor (prlimit --fsize)', () => {
  for (const [name, supervision] of [
    ['the host', HOST],
    ["a Run's own supervisor", {ACTORS_SUPERVISION: 'run'}],
  ] as const)
    it(`on ${name}: no state file is cut short, and the Run's end is kept`, async () => {
      const home = newHome()
      const victim = launch(home, ['--name', 'victim', '--', 'sh', '-c', 'sleep 1.5; echo done; exit 6'], supervision)
      await commandStarted(victim.state_dir)
      // From inside a Run, as a neighbour would.
      const limit = `prlimit --pid ${victim.pid} --fsize=150:150`
      const att = actors(home, ['run', '--wait', '--name', 'att', '--', 'sh', '-c', limit], {
        env: {ACTORS_SUPERVISION: 'run'},
      })
      expect(att.code, att.stderr).toBe(0)
      const waited = actors(home, ['wait', 'victim', '--json', '--timeout', '20s'], {timeout: 30_000})
      expect(waited.code, waited.stdout + waited.stderr).toBe(1)
      expect(readJson(join(victim.state_dir, 'result.json'))).toMatchObject({status: 'failed', exit_code: 6})
      expect(readJson(join(victim.state_dir, 'run.json'))).toMatchObject({status: 'failed', exit_code: 6})
    }, 40_000)
})

describe('a Run that kills the host in a loop', () => {
  it('every Run launched meanwhile runs its command exactly once, and ends as it exits', async () => {
    const home = newHome()
    const killer = `while :; do ${KILL_HOST} 2>/dev/null; sleep 0.03; done`
    launch(home, ['--name', 'killer', '--timeout', '40s', '--', 'sh', '-c', killer], {ACTORS_SUPERVISION: 'run'})
    const runs = []
    for (let i = 1; i <= 6; i++) {
      const count = join(home, `count-${i}`)
      runs.push({
        count,
        ...launch(home, ['--name', `v${i}`, '--', 'sh', '-c', `echo ran >> '${count}'; sleep 0.5; exit ${i}`], HOST),
      })
    }
    for (const [i, run] of runs.entries()) {
      const waited = actors(home, ['wait', run.run, '--json', '--timeout', '30s'], {timeout: 40_000})
      expect(waited.code, waited.stdout + waited.stderr).toBe(1)
      expect(readJson(join(run.state_dir, 'result.json')), run.run).toMatchObject({status: 'failed', exit_code: i + 1})
      expect(readFileSync(run.count, 'utf8'), run.run).toBe('ran\n')
    }
  }, 120_000)
})

describe('the host and what its commands inherit', () => {
  it("a launch with another umask or nice value gets a supervisor of its own: its command gets the launcher's, not the host's", async () => {
    const home = newHome()
    const probe = ['--', 'sh', '-c', 'umask; nice; sleep 5']
    const inShell = (prefix: string, name: string) => {
      const r = spawnSync(
        'sh',
        ['-c', `${prefix} "$@"`, 'sh', process.execPath, BIN, 'run', '--json', '--name', name, ...probe],
        {
          env: cliEnv(home, HOST),
          encoding: 'utf8',
        },
      )
      expect(r.status, r.stderr).toBe(0)
      return JSON.parse(r.stdout) as {state_dir: string; pid: number}
    }
    // The first launch starts the host, with its launcher's attributes: the umask 022 and nice value of this test.
    const first = inShell('umask 022; exec', 'first')
    await commandStarted(first.state_dir)
    const host = hostPid(home)
    expect(first.pid).toBe(host)
    const private_ = inShell('umask 077; exec', 'private')
    const niced = inShell('umask 022; exec nice -n 5', 'niced')
    const plain = inShell('umask 022; exec', 'plain')
    // A scheduling policy the host does not have (SCHED_BATCH): a supervisor of its own too.
    const batch = inShell('umask 022; exec chrt -b 0', 'batch')
    expect(batch.pid).not.toBe(host)
    expect(private_.pid).not.toBe(host)
    expect(niced.pid).not.toBe(host)
    expect(plain.pid).toBe(host)
    const output = (run: {state_dir: string}) =>
      waitFor(
        () =>
          readFileSync(join(run.state_dir, 'stdout.log'), 'utf8').trim().split('\n').length === 2 &&
          readFileSync(join(run.state_dir, 'stdout.log'), 'utf8').trim().split('\n'),
      )
    const [, base] = await output(first)
    expect(await output(private_)).toEqual(['0077', base])
    expect(await output(niced)).toEqual(['0022', String(Math.min(19, Number(base) + 5))])
    expect(await output(plain)).toEqual(['0022', base])
  })

  it('a request whose dir is an object with a bad toString is refused, and the host lives on', async () => {
    const home = newHome()
    const first = launch(home, ['--name', 'first', '--', 'sleep', '20'], HOST)
    await commandStarted(first.state_dir)
    const host = hostPid(home)
    const ask = `const s=require('net').connect(process.argv[1],()=>s.write('{"dir":{"toString":1}}\\n'));let t='';s.on('data',(c)=>t+=c);s.on('close',()=>process.stdout.write(t))`
    const r = spawnSync(process.execPath, ['-e', ask, join(home, 'supervision', 'host.sock')], {
      encoding: 'utf8',
      timeout: 10_000,
    })
    expect(JSON.parse(r.stdout).error).toMatch(/is not a state dir/)
    expect(processAlive(host)).toBe(true)
    const next = launch(home, ['--name', 'next', '--', 'true'], HOST)
    expect(next.pid).toBe(host)
  })
})

/** The TCP ports process `pid` listens on (its socket descriptors matched against /proc/net/tcp and tcp6). */
function listeningPorts(pid: number): number[] {
  const inodes = new Set<string>()
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const link = readlinkSync(`/proc/${pid}/fd/${fd}`)
      if (link.startsWith('socket:[')) inodes.add(link.slice(8, -1))
    } catch {}
  }
  const ports: number[] = []
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    for (const line of readFileSync(table, 'utf8').split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/)
      // local_address (HEX_IP:HEX_PORT), state 0A = LISTEN, inode is the 10th field.
      if (fields[3] === '0A' && inodes.has(fields[9])) ports.push(Number.parseInt(fields[1].split(':')[1], 16))
    }
  }
  return ports
}

describe("SIGUSR1, which opens Node's inspector unless taken", () => {
  it('sent by a Run to the host, to its own supervisor and to a waiting `actors wait`, opens no port in any of them', async () => {
    const home = newHome()
    const hosted = launch(home, ['--name', 'hosted', '--', 'sleep', '20'], HOST)
    const own = launch(home, ['--name', 'own', '--', 'sleep', '20'], {ACTORS_SUPERVISION: 'run'})
    await commandStarted(hosted.state_dir)
    await commandStarted(own.state_dir)
    const waiter = spawn(process.execPath, [BIN, 'wait', 'hosted'], {env: cliEnv(home), stdio: 'ignore'})
    try {
      await waitFor(() => readFileSync(`/proc/${waiter.pid}/cmdline`, 'utf8').includes('wait'), 10_000, 'the wait')
      // Well past their start (a supervisor looks once more, a second in, for an inspector opened while it started).
      await new Promise((resolve) => setTimeout(resolve, 1500))
      const targets = [hosted.pid, own.pid, waiter.pid!]
      expect(new Set(targets).size).toBe(3)
      // From inside a Run, as an attacker would.
      const signal = targets.map((pid) => `kill -USR1 ${pid}`).join('; ')
      const attacker = actors(home, ['run', '--wait', '--name', 'att', '--', 'sh', '-c', signal], {
        env: {ACTORS_SUPERVISION: 'run'},
      })
      expect(attacker.code, attacker.stderr).toBe(0)
      await new Promise((resolve) => setTimeout(resolve, 500))
      for (const pid of targets) {
        expect(processAlive(pid)).toBe(true)
        expect(listeningPorts(pid)).toEqual([])
      }
    } finally {
      waiter.kill('SIGKILL')
    }
  })
})

describe('damage in supervision/ that keeps every host from starting', () => {
  const damages: [string, (supervision: string) => void, string][] = [
    ['host.sock a directory', (d) => mkdirSync(join(d, 'host.sock')), 'host.sock is a directory'],
    ['host.sock a link', (d) => symlinkSync('/dev/zero', join(d, 'host.sock')), 'host.sock is a symbolic link'],
    ['host.json a FIFO', (d) => spawnSync('mkfifo', [join(d, 'host.json')]), 'host.json is no file'],
    ['host.json a directory', (d) => mkdirSync(join(d, 'host.json')), 'host.json is no file'],
  ]
  for (const [name, damage, said] of damages)
    it(`${name}: a launch says so and gets a supervisor of its own at once, not after 10 s`, async () => {
      const home = newHome()
      const supervision = join(home, 'supervision')
      mkdirSync(supervision, {recursive: true, mode: 0o700})
      damage(supervision)
      const began = Date.now()
      const r = actors(home, ['run', '--json', '--', 'sh', '-c', 'exit 3'], {env: HOST})
      expect(r.code, r.stderr).toBe(0)
      expect(Date.now() - began).toBeLessThan(5000)
      expect(r.stderr).toContain(said)
      expect(r.stderr).toContain('remove it')
      const waited = actors(home, ['wait', r.json.run, '--json'], {env: HOST})
      expect(waited.code).toBe(1)
      expect(readJson(join(r.json.state_dir, 'result.json')).exit_code).toBe(3)
    })

  it('supervision/ a file: the same', () => {
    const home = newHome()
    mkdirSync(join(home), {recursive: true})
    writeFileSync(join(home, 'supervision'), 'not a dir')
    const began = Date.now()
    const r = actors(home, ['run', '--json', '--', 'true'], {env: HOST})
    expect(r.code, r.stderr).toBe(0)
    expect(Date.now() - began).toBeLessThan(5000)
    expect(r.stderr).toContain('is no directory')
  })
})

describe('connections held open to the host', () => {
  it('600 idle connections: the host serves at most 256 at once and closes the idle ones; a neighbour ends on time', async () => {
    const home = newHome()
    const keep = launch(home, ['--name', 'keep', '--', 'sleep', '30'], HOST)
    await commandStarted(keep.state_dir)
    const host = hostPid(home)
    const descriptors = () => readdirSync(`/proc/${host}/fd`).length
    const before = descriptors()
    const sockets: Socket[] = []
    for (let i = 0; i < 600; i++) {
      const socket = connect(join(home, 'supervision', 'host.sock'))
      socket.on('error', () => {})
      sockets.push(socket)
    }
    try {
      await new Promise((resolve) => setTimeout(resolve, 1000))
      expect(descriptors()).toBeLessThanOrEqual(before + 256 + 8)
      const quick = launch(home, ['--name', 'quick', '--timeout', '2s', '--', 'sleep', '10'], HOST)
      const result = await waitFor(() => readJson(join(quick.state_dir, 'result.json')), 15_000, 'the timeout')
      expect(result).toMatchObject({status: 'failed', reason: 'timeout'})
      // Idle past the request time: closed.
      await waitFor(() => descriptors() <= before + 8, 10_000, 'the idle connections closed')
      // Dripping a byte a second, never a whole line: closed as well, 5 s after each connected.
      const drips = Array.from({length: 20}, () =>
        connect(join(home, 'supervision', 'host.sock')).on('error', () => {}),
      )
      sockets.push(...drips)
      const drip = setInterval(() => {
        for (const socket of drips) if (!socket.destroyed) socket.write('x')
      }, 1000)
      try {
        await waitFor(
          () => drips.every((socket) => socket.destroyed || socket.readableEnded) || undefined,
          9000,
          'drips closed',
        )
      } finally {
        clearInterval(drip)
      }
    } finally {
      for (const socket of sockets) socket.destroy()
    }
  }, 40_000)
})
