/**
 * A lock a Run can make or keep never costs another Run its end (issue 35:
 * a Run that made its own `.lock` a directory, or kept a sibling's `.lock`
 * under its own live process, left that Run `running` with no supervisor and
 * its exit status lost; every later read of the root stalled on it). Real
 * Runs as the adversary; the lock wait is shortened to 2 s for the supervisor
 * (ACTORS_TEST_LOCK_WAIT_MS) so the test need not sit out the usual 30 s.
 */
import {spawn, spawnSync} from 'node:child_process'
import {existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync} from 'node:fs'
import {dirname, join} from 'node:path'
import {setTimeout as sleep} from 'node:timers/promises'
import {describe, expect, it} from 'vitest'
import {discoverCgroupBases} from '../src/lib/kernel/containment/cgroup-fs.js'
import {INIT, INITIALIZED, killRawServers, open as openRaw, ping} from './mcp-raw.js'
import {
  actors,
  BIN,
  cgroup2Root,
  cliEnv,
  homesPerTest,
  processAlive,
  readJson,
  tempDir,
  removeDir,
  waitFor,
  waitForResult,
} from './helpers.js'

const home = homesPerTest('actors-trust-locks-')
const SHORT_LOCK_WAIT = {ACTORS_TEST_LOCK_WAIT_MS: '2000'}
const CONTAINMENTS = [
  {mode: 'cgroup', env: {ACTORS_CONTAINMENT: 'cgroup'}, skip: discoverCgroupBases() === null},
  {mode: 'tracked', env: {ACTORS_CONTAINMENT: 'tracked'}, skip: false},
] as const

/** Node code that takes `file` as a lock in the kernel's form (a link naming this live process), then idles. */
const HOLD_LOCK = [
  "const fs=require('fs')",
  "const st=fs.readFileSync('/proc/self/stat','utf8')",
  "const start=st.slice(st.lastIndexOf(')')+2).split(' ')[19]",
  "const boot=fs.readFileSync('/proc/sys/kernel/random/boot_id','utf8').trim()",
  'fs.rmSync(process.argv[1],{force:true})',
  'fs.symlinkSync(JSON.stringify({pid:process.pid,start,boot}),process.argv[1])',
  "fs.writeFileSync(process.argv[2],'')",
  'setInterval(()=>{},1e6)',
].join(';')

describe('locks a Run can make or keep', () => {
  it('a directory made at its own .lock: the end (exit 3) is recorded at once and delivered', async () => {
    const h = home()
    const script = 'rm -f "$ACTORS_STATE_DIR/.lock"; mkdir "$ACTORS_STATE_DIR/.lock"; exit 3'
    const r = actors(h, ['run', '--name', 'v', '--json', '--', 'sh', '-c', script])
    expect(r.code, r.stderr).toBe(0)
    const result = await waitForResult(r.json.state_dir, 10_000)
    expect(result).toMatchObject({status: 'failed', exit_code: 3})
    const wait = actors(h, ['wait', 'v', '--timeout', '5s', '--json'])
    expect(wait.json.rows).toMatchObject([{run: 'v', exit_code: 3}])
  }, 30_000)

  it('a .lock naming its own supervisor, which does not hold it: the end (exit 3) is recorded at once, not after the 30 s lock wait', async () => {
    const h = home()
    // What a dir renamed while its lock was held leaves behind, or a Run writes on purpose.
    const code = [
      "const fs=require('fs'),d=process.env.ACTORS_STATE_DIR",
      "const {pid,start,boot}=JSON.parse(fs.readFileSync(d+'/run.json','utf8')).process_identity",
      "fs.rmSync(d+'/.lock',{force:true});fs.symlinkSync(JSON.stringify({pid,start,boot}),d+'/.lock')",
      'process.exit(3)',
    ].join(';')
    const r = actors(h, ['run', '--name', 'v', '--json', '--', process.execPath, '-e', code])
    expect(r.code, r.stderr).toBe(0)
    const started = Date.now()
    const result = await waitForResult(r.json.state_dir, 20_000)
    expect(result).toMatchObject({status: 'failed', exit_code: 3})
    expect(Date.now() - started).toBeLessThan(10_000)
    expect(readFileSync(join(r.json.state_dir, 'stderr.log'), 'utf8')).not.toContain('recorded without it')
  }, 40_000)

  it('a FIFO made at its own .lock: control kill ends it at once, and it reads killed', async () => {
    const h = home()
    const fifo =
      'rm -f "$ACTORS_STATE_DIR/.lock"; mkfifo "$ACTORS_STATE_DIR/.lock"; touch "$ACTORS_STATE_DIR/made"; exec sleep 300'
    const r = actors(h, ['run', '--name', 'v', '--json', '--', 'sh', '-c', fifo])
    expect(r.code, r.stderr).toBe(0)
    await waitFor(() => existsSync(join(r.json.state_dir, 'made')), 10_000, 'the FIFO')
    // It hung for ever: reading the lock's holder opened the FIFO and waited for a writer.
    const kill = actors(h, ['control', 'v', 'kill'], {timeout: 15_000})
    expect(kill.code, kill.stderr).toBe(0)
    expect((await waitForResult(r.json.state_dir, 10_000)).status).toBe('killed')
  }, 40_000)

  /** Launch Run `name` (its command: `argv`); returns its state dir. */
  function launch(h: string, name: string, argv: string[], env: NodeJS.ProcessEnv = {}): string {
    const r = actors(h, ['run', '--name', name, '--json', '--', ...argv], {env})
    expect(r.code, r.stderr).toBe(0)
    return r.json.state_dir
  }

  /** Launch Run `v`, whose command keeps `lock` as a live lock of its own; resolves once it holds it. */
  async function holdWithRun(h: string, lock: string): Promise<string> {
    const held = join(h, 'held')
    const dir = launch(h, 'v', [process.execPath, '-e', HOLD_LOCK, lock, held])
    await waitFor(() => existsSync(held), 10_000, 'the hold on the lock')
    return dir
  }

  it("a sibling's .lock kept by a live process of another Run: the sibling's end (exit 7) is still recorded", async () => {
    const h = home()
    const go = join(h, 'go')
    const w = launch(h, 'w', ['sh', '-c', `while [ ! -e '${go}' ]; do sleep 0.05; done; exit 7`], SHORT_LOCK_WAIT)
    await holdWithRun(h, join(w, '.lock'))
    try {
      writeFileSync(go, '')
      const result = await waitForResult(w, 20_000)
      expect(result).toMatchObject({status: 'failed', exit_code: 7})
      expect(readFileSync(join(w, 'stderr.log'), 'utf8')).toContain('the end is recorded without it')
    } finally {
      actors(h, ['control', 'v', 'kill'])
    }
  }, 40_000)

  /** How a busy answer names Run `run` (state dir `dir`): by its cgroup where it has one, else by the holder's environment. */
  const namedHolder = (dir: string, run: string) =>
    readJson(join(dir, 'run.json')).containment?.kind === 'cgroup'
      ? `a process in the cgroup of Run ${run}`
      : `a process whose environment names the Run in ${dir}`

  it('a busy answer names the Run whose process keeps the lock, and how to end it', async () => {
    const h = home()
    const u = launch(h, 'u', ['sleep', '30'])
    const v = await holdWithRun(h, join(u, '.lock'))
    try {
      const pause = actors(h, ['control', 'u', 'pause'], {env: SHORT_LOCK_WAIT})
      expect(pause.code, pause.stderr).toBe(5)
      expect(pause.stderr).toContain(namedHolder(v, 'v'))
      expect(pause.stderr).toContain('actors control v kill')
    } finally {
      actors(h, ['control', 'v', 'kill'])
      actors(h, ['control', 'u', 'kill'])
    }
  }, 40_000)

  // Under cgroups the holder's cgroup names its Run: an environment naming another Run (w) is not believed.
  for (const _ of discoverCgroupBases() ? ['cgroup'] : []) {
    it("a holder in one Run's cgroup whose environment names another Run: busy names the Run it is in", async () => {
      const h = home()
      const u = launch(h, 'u', ['sleep', '30'])
      const w = launch(h, 'w', ['sleep', '30'])
      const held = join(h, 'held')
      const v = launch(h, 'v', [
        'env',
        `ACTORS_STATE_DIR=${w}`,
        process.execPath,
        '-e',
        HOLD_LOCK,
        join(u, '.lock'),
        held,
      ])
      await waitFor(() => existsSync(held), 10_000, 'the hold on the lock')
      try {
        const pause = actors(h, ['control', 'u', 'pause'], {env: SHORT_LOCK_WAIT})
        expect(pause.code, pause.stderr).toBe(5)
        expect(pause.stderr).toContain(namedHolder(v, 'v'))
        expect(pause.stderr).toContain('actors control v kill')
        expect(pause.stderr).not.toContain('actors control w kill')
      } finally {
        for (const run of ['v', 'w', 'u']) actors(h, ['control', run, 'kill'])
      }
    }, 40_000)
  }

  // A Run (here as root) may make cgroups below its own and name one after another Run's unit: the name proves nothing.
  for (const _ of discoverCgroupBases() && process.getuid?.() === 0 && cgroup2Root() ? ['cgroup'] : []) {
    it("a holder in a cgroup its Run made and named after another Run's: busy names the Run it is in", async () => {
      const h = home()
      const u = launch(h, 'u', ['sleep', '30'])
      const w = launch(h, 'w', ['sleep', '30'])
      const unit = `w@${readJson(join(w, 'run.json')).run_instance_id}`
      const held = join(h, 'held')
      const script = [
        `own="${cgroup2Root()}$(sed -n 's/^0:://p' /proc/self/cgroup)"`,
        // The kernel's layout, actors/<state root key>/<run>@<instance>, again below its own cgroup.
        `fake="$own/actors/$(basename "$(dirname "$own")")/${unit}"`,
        'mkdir -p "$fake"',
        'echo $$ > "$fake/cgroup.procs"',
        'exec "$@"',
      ].join('; ')
      const v = launch(h, 'v', ['sh', '-c', script, 'sh', process.execPath, '-e', HOLD_LOCK, join(u, '.lock'), held])
      await waitFor(() => existsSync(held), 10_000, 'the hold on the lock')
      try {
        const pause = actors(h, ['control', 'u', 'pause'], {env: SHORT_LOCK_WAIT})
        expect(pause.code, pause.stderr).toBe(5)
        expect(pause.stderr).toContain(namedHolder(v, 'v'))
        expect(pause.stderr).not.toContain('actors control w kill')
      } finally {
        for (const run of ['v', 'w', 'u']) actors(h, ['control', run, 'kill'])
      }
    }, 40_000)
  }

  it("a lock's mutex kept by a Run: a try-once acquire answers busy in the lock wait, naming that Run", async () => {
    const h = home()
    const mutex = join(h, 'locks', '.mutex', 'db.lock')
    mkdirSync(dirname(mutex), {recursive: true, mode: 0o700})
    await holdWithRun(h, mutex)
    try {
      const started = Date.now()
      const taken = actors(h, ['lock', 'acquire', 'db', '--holder', 'x', '--lease', '1m'], {env: SHORT_LOCK_WAIT})
      expect(taken.code, taken.stderr).toBe(5)
      expect(taken.stderr).toContain('actors control v kill')
      // It waited 120 s whatever the lock wait was.
      expect(Date.now() - started).toBeLessThan(15_000)
    } finally {
      actors(h, ['control', 'v', 'kill'])
    }
  }, 40_000)

  it("a lock's mutex kept by a Run stalls no other call of an MCP session: ping answers while acquire waits, then busy", async () => {
    const h = home()
    const mutex = join(h, 'locks', '.mutex', 'db.lock')
    mkdirSync(dirname(mutex), {recursive: true, mode: 0o700})
    await holdWithRun(h, mutex)
    const saved = process.env.ACTORS_TEST_LOCK_WAIT_MS
    process.env.ACTORS_TEST_LOCK_WAIT_MS = '4000'
    const session = openRaw(h)
    try {
      session.send(INIT)
      await session.reply(1)
      session.send(INITIALIZED)
      const args = {op: 'acquire', name: 'db', holder: 'agent-7', lease: '1m'}
      session.send(
        JSON.stringify({jsonrpc: '2.0', id: 2, method: 'tools/call', params: {name: 'lock', arguments: args}}),
      )
      await sleep(300)
      const asked = Date.now()
      session.send(ping(3))
      await session.reply(3)
      // Blocked in a synchronous wait, the server answered nothing for the whole lock wait (4 s here, 30 s by default).
      expect(Date.now() - asked).toBeLessThan(1500)
      const busy = await session.reply(2)
      expect(busy.result.isError).toBe(true)
      expect(busy.result.structuredContent.error).toMatchObject({exit_code: 5})
      expect(busy.result.structuredContent.error.fix).toContain('actors control v kill')
    } finally {
      if (saved === undefined) delete process.env.ACTORS_TEST_LOCK_WAIT_MS
      else process.env.ACTORS_TEST_LOCK_WAIT_MS = saved
      killRawServers()
      actors(h, ['control', 'v', 'kill'])
    }
  }, 40_000)

  it("a Run's .lock kept by another Run blocks an MCP session for 5 s at most, not the 30 s lock wait: busy, naming the keeper", async () => {
    const h = home()
    const w = launch(h, 'w', ['sleep', '60'])
    await holdWithRun(h, join(w, '.lock'))
    const session = openRaw(h, ['--owner', 'default', '--allow-adhoc'])
    try {
      session.send(INIT)
      await session.reply(1)
      session.send(INITIALIZED)
      const started = Date.now()
      const args = {run: 'w', message: 'hello'}
      session.send(
        JSON.stringify({jsonrpc: '2.0', id: 2, method: 'tools/call', params: {name: 'send', arguments: args}}),
      )
      const busy = await session.reply(2, 25_000)
      expect(busy.result.structuredContent.error).toMatchObject({exit_code: 5})
      expect(busy.result.structuredContent.error.fix).toContain('actors control v kill')
      expect(Date.now() - started).toBeLessThan(12_000)
    } finally {
      killRawServers()
      actors(h, ['control', 'v', 'kill'])
      actors(h, ['control', 'w', 'kill'])
    }
  }, 60_000)

  it("a lock record pairing a dead holder with another lock exec's unit: the slot passes on, that unit's command lives", async () => {
    const h = home()
    const length = `301.${process.pid}${Math.floor(Math.random() * 1e6)}` // its command line is this test's alone
    const victim = spawn(process.execPath, [BIN, 'lock', 'exec', 'other', '--', 'sleep', length], {
      env: cliEnv(h),
      stdio: 'ignore',
      detached: true,
    })
    try {
      const unit = await waitFor(
        () => readJson(join(h, 'locks', 'other.json')).holders[0]?.holder.unit,
        10_000,
        'the unit',
      )
      const sleeper = await waitFor(
        () =>
          Number(spawnSync('pgrep', ['-f', '-x', `sleep ${length}`], {encoding: 'utf8'}).stdout.trim()) || undefined,
        10_000,
        'the victim command',
      )
      // What a Run can write into locks/: db held by a process that is gone, its unit the other lock's cgroup.
      const gone = spawnSync('true').pid
      const forged = {
        schema: 'actors-lock-v1',
        lock: 'db',
        slots: 1,
        holders: [
          {
            holder: {kind: 'process', pid: gone, start: '1', unit},
            label: `pid:${gone}`,
            since: new Date().toISOString(),
          },
        ],
        queue: [],
        updated_at: new Date().toISOString(),
      }
      writeFileSync(join(h, 'locks', 'db.json'), JSON.stringify(forged))
      const taken = actors(h, ['lock', 'acquire', 'db', '--holder', 'x', '--lease', '1m', '--json'])
      expect(taken.code, taken.stderr).toBe(0)
      expect(processAlive(sleeper)).toBe(true)
    } finally {
      try {
        if (victim.pid) process.kill(-victim.pid, 'SIGKILL')
      } catch {}
      spawnSync('pkill', ['-KILL', '-f', '-x', `sleep ${length}`])
    }
  }, 30_000)

  for (const c of CONTAINMENTS)
    it.skipIf(c.skip)(
      `${c.mode}: a record copying a live lock exec's holder with another boot id (or none) or a start no process has: dropped, nothing of that lock exec killed; its own lost unit still ended`,
      async () => {
        const h = home()
        const length = `302.${process.pid}${Math.floor(Math.random() * 1e6)}` // its command line is this test's alone
        const victim = spawn(process.execPath, [BIN, 'lock', 'exec', 'LV', '--', 'sleep', length], {
          env: cliEnv(h, c.env),
          stdio: 'ignore',
          detached: true,
        })
        try {
          const held = await waitFor(
            () => readJson(join(h, 'locks', 'LV.json')).holders[0]?.holder,
            10_000,
            'the holder',
          )
          const sleeper = await waitFor(
            () =>
              Number(spawnSync('pgrep', ['-f', '-x', `sleep ${length}`], {encoding: 'utf8'}).stdout.trim()) ||
              undefined,
            10_000,
            'the victim command',
          )
          // What any Run can write into locks/: the live holder's pid, start and unit, with another boot id or none.
          const now = new Date().toISOString()
          const {boot: _, ...bootless} = held
          const forge = (lock: string, holder: object) =>
            writeFileSync(
              join(h, 'locks', `${lock}.json`),
              JSON.stringify({
                schema: 'actors-lock-v1',
                lock,
                slots: 1,
                holders: [{holder, label: 'pid:x', since: now}],
                queue: [],
                updated_at: now,
              }),
            )
          forge('LX', {...held, boot: '00000000-0000-0000-0000-000000000000'})
          forge('LY', bootless)
          // Its start written so no live process has it (the holder reads as dead), yet the same once cut to digits.
          forge('LZ', {...held, start: `${held.start}.`})
          forge('LW', {...held, start: ` ${held.start}`})
          forge('LN', {...held, start: Number(held.start)}) // a JSON number: no live process reads as one
          const status = actors(h, ['lock', 'status', 'LX', '--json'])
          expect(status.code, status.stderr).toBe(0)
          expect(status.json.holders).toEqual([])
          const taken = actors(h, ['lock', 'acquire', 'LY', '--holder', 'y', '--lease', '1m'])
          expect(taken.code, taken.stderr).toBe(0)
          for (const lock of ['LZ', 'LW', 'LN'])
            expect(actors(h, ['lock', 'status', lock, '--json']).json.holders, lock).toEqual([])
          await sleep(500)
          expect(processAlive(sleeper), "the live lock exec's command was killed").toBe(true)
          expect(JSON.stringify(actors(h, ['lock', 'status', 'LV', '--json']).json)).toContain(`pid:${victim.pid}`)
          // The lock exec itself dies (its COMMAND lives on in its unit): the next lock operation ends that unit.
          process.kill(victim.pid!, 'SIGKILL')
          await waitFor(() => !processAlive(victim.pid!) || undefined, 5000, 'the lock exec to die')
          const after = actors(h, ['lock', 'status', 'LV', '--json'])
          expect(after.code, after.stderr).toBe(0)
          await waitFor(() => !processAlive(sleeper) || undefined, 5000, 'its lost unit to be ended')
          expect(JSON.stringify(after.json)).not.toContain(`pid:${victim.pid}`)
        } finally {
          // Its process group, by the syscall: procps-ng's kill(1) has read `-KILL -PGID` as every process.
          try {
            if (victim.pid) process.kill(-victim.pid, 'SIGKILL')
          } catch {}
          spawnSync('pkill', ['-KILL', '-f', '-x', `sleep ${length}`])
        }
      },
      30_000,
    )

  it("a Run holder record naming a made-up dir as another Run's: judged by the real Run, which keeps running", async () => {
    const h = home()
    const tag = `red7lockvic${process.pid}${Math.floor(Math.random() * 1e6)}`
    const vic = actors(h, ['run', '--name', 'vic', '--json', '--', 'sh', '-c', `sleep 120; exit 0 # ${tag}`])
    expect(vic.code, vic.stderr).toBe(0)
    try {
      await waitFor(() => readJson(join(vic.json.state_dir, 'run.json')).process_identity, 10_000, 'the victim')
      // A neighbour Run: a copy of vic's run.json with a dead supervisor in a dir of its own, named by the holder.
      const code = [
        "const fs=require('fs'),home=process.env.ACTORS_HOME,fake=process.env.ACTORS_STATE_DIR+'/x/vic'",
        'fs.mkdirSync(fake,{recursive:true})',
        "const j=JSON.parse(fs.readFileSync(home+'/runs/vic/run.json'))",
        "j.pid=999999;j.process_identity={...j.process_identity,pid:999999,start:'1'}",
        "fs.writeFileSync(fake+'/run.json',JSON.stringify(j))",
        "fs.mkdirSync(home+'/locks',{recursive:true})",
        'const now=new Date().toISOString()',
        "const holder={kind:'run',run:'vic',run_instance_id:j.run_instance_id,state_dir:fake}",
        "fs.writeFileSync(home+'/locks/LK.json',JSON.stringify({schema:'actors-lock-v1',lock:'LK',slots:1,holders:[{holder,label:'run:vic',since:now}],queue:[],updated_at:now}))",
      ].join(';')
      const att = actors(h, ['run', '--name', 'att', '--wait', '--', process.execPath, '-e', code])
      expect(att.code, att.stderr).toBe(0)
      expect(existsSync(join(h, 'locks', 'LK.json'))).toBe(true)
      const status = actors(h, ['lock', 'status', 'LK', '--json'])
      expect(status.code, status.stderr).toBe(0)
      await sleep(500)
      const alive = spawnSync('pgrep', ['-f', tag], {encoding: 'utf8'}).stdout.trim()
      expect(alive, 'the victim Run was killed').not.toBe('')
      expect(actors(h, ['inspect', 'vic', '--json']).json).toMatchObject({status: 'running'})
      // Still vic's slot: the real Run is live.
      expect(JSON.stringify(status.json)).toContain('run:vic')
    } finally {
      actors(h, ['control', 'vic', 'kill'])
    }
  }, 40_000)

  it('a Run holder record with an expired lease and a state_dir outside the root: nothing is written there', () => {
    const h = home()
    const out = join(h, '..', `${h.split('/').pop()}-outside`)
    mkdirSync(out, {recursive: true})
    const donor = actors(h, ['run', '--name', 'donor', '--wait', '--json', '--', 'true'])
    expect(donor.code, donor.stderr).toBe(0)
    const meta = readJson(join(h, 'runs', 'donor', 'run.json'))
    writeFileSync(join(out, 'run.json'), JSON.stringify({...meta, status: 'running'}))
    mkdirSync(join(h, 'locks'), {recursive: true})
    const now = new Date().toISOString()
    const holder = {kind: 'run', run: 'donor', run_instance_id: meta.run_instance_id, state_dir: out}
    const expired = {holder, label: 'run:donor', since: now, lease_ms: 1, lease_expires_at: '2020-01-01T00:00:00Z'}
    const record = {schema: 'actors-lock-v1', lock: 'LT', slots: 1, holders: [expired], queue: [], updated_at: now}
    writeFileSync(join(h, 'locks', 'LT.json'), JSON.stringify(record))
    // A holder whose run id no Run can have: its slot is freed, nothing acted on.
    const bad = {
      ...record,
      lock: 'LB',
      holders: [{...expired, holder: {...holder, run: '../../x'}, lease_expires_at: undefined}],
    }
    writeFileSync(join(h, 'locks', 'LB.json'), JSON.stringify(bad))
    try {
      const taken = actors(h, ['lock', 'acquire', 'LT', '--holder', 'q', '--lease', '1m'])
      expect(taken.code, taken.stderr).toBe(0)
      expect(existsSync(join(out, 'trace.jsonl'))).toBe(false)
      const other = actors(h, ['lock', 'acquire', 'LB', '--holder', 'q', '--lease', '1m'])
      expect(other.code, other.stderr).toBe(0)
    } finally {
      spawnSync('rm', ['-rf', out])
    }
  }, 30_000)

  it('whatever a Run leaves at locks/journal.jsonl (link, FIFO, directory, hard link): moved aside and named once; every lock operation answers what it committed', async () => {
    const h = home()
    const outside = tempDir('actors-trust-locks-outside-')
    const journal = join(h, 'locks', 'journal.jsonl')
    const asides = () => readdirSync(join(h, 'locks')).filter((f) => f.startsWith('journal.jsonl.damaged-'))
    try {
      expect(actors(h, ['lock', 'acquire', 'L0', '--holder', 'h', '--lease', '1m']).code).toBe(0)
      writeFileSync(join(outside, 'target'), 'outside\n')
      const plants: Array<[string, () => void]> = [
        ['a symbolic link', () => symlinkSync(join(outside, 'target'), journal)],
        ['not a regular file', () => spawnSync('mkfifo', [journal])],
        ['a directory', () => mkdirSync(journal)],
        ['a second name of another file (a hard link)', () => spawnSync('ln', [join(outside, 'target'), journal])],
      ]
      for (const [what, plant] of plants) {
        rmSync(journal, {force: true})
        plant()
        const before = asides().length
        const acquire = actors(h, ['lock', 'acquire', 'L3', '--holder', 'h', '--lease', '1m'])
        expect(acquire.code, acquire.stderr).toBe(0)
        expect(acquire.stderr).toContain(`the lock journal ${journal} was ${what}: moved aside`)
        expect(acquire.stderr.split('moved aside').length - 1).toBe(1)
        expect(asides().length).toBe(before + 1)
        expect(lstatSync(journal).isFile()).toBe(true)
        expect(readFileSync(journal, 'utf8')).toContain('"op":"acquired","lock":"L3"')
        const release = actors(h, ['lock', 'release', 'L3', '--holder', 'h'])
        expect(release.code, release.stderr).toBe(0)
        expect(release.stderr).not.toContain('journal')
        expect(actors(h, ['lock', 'status', 'L3', '--json']).json.holders).toEqual([])
        rmSync(journal, {recursive: true, force: true})
      }
      expect(readFileSync(join(outside, 'target'), 'utf8')).toBe('outside\n')
      // lock exec runs COMMAND, and a Recipe with locks ends done, with a link planted again before each.
      symlinkSync(join(outside, 'target'), journal)
      const exec = actors(h, ['lock', 'exec', 'L4', '--', 'echo', 'COMMAND-RAN'])
      expect(exec.code, exec.stderr).toBe(0)
      expect(exec.stdout).toContain('COMMAND-RAN')
      const project = tempDir('actors-trust-locks-project-')
      try {
        mkdirSync(join(project, 'recipes'))
        writeFileSync(join(project, 'recipes', 'lk.yaml'), 'description: x\nlocks: [L5]\ntemplate: echo locked-ran\n')
        rmSync(journal, {force: true})
        symlinkSync(join(outside, 'target'), journal)
        const run = actors(h, ['run', 'lk', '--name', 'lk', '--wait', '--json'], {cwd: project})
        expect(run.code, run.stderr).toBe(0)
        expect((await waitForResult(join(h, 'runs', 'lk'), 10_000)).status).toBe('done')
      } finally {
        removeDir(project)
      }
      expect(readFileSync(join(outside, 'target'), 'utf8')).toBe('outside\n')
    } finally {
      removeDir(outside)
    }
  }, 60_000)

  it("a waiter planted at the head of a lock's queue with a live identity (pid 1): lock status shows it, and lock release --holder removes it", async () => {
    const h = home()
    expect(actors(h, ['lock', 'acquire', 'LQ', '--holder', 'h', '--lease', '1m']).code).toBe(0)
    // What any Run can write into locks/: a waiter naming a process that lives and will never take its turn.
    const file = join(h, 'locks', 'LQ.json')
    const state = readJson(file)
    const stat = readFileSync('/proc/1/stat', 'utf8')
    const start = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]
    const boot = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim()
    const now = new Date().toISOString()
    state.queue.unshift({
      waiter: {pid: 1, start, boot},
      holder: {kind: 'named', id: 'ghost'},
      label: 'ghost',
      since: now,
      queued_at: now,
    })
    writeFileSync(file, JSON.stringify(state))
    expect(actors(h, ['lock', 'release', 'LQ', '--holder', 'h']).code).toBe(0)
    const shown = actors(h, ['lock', 'status', 'LQ'])
    expect(shown.stdout).toContain('ghost')
    const blocked = actors(h, ['lock', 'acquire', 'LQ', '--holder', 'me', '--lease', '1m', '--wait', '1s'])
    expect(blocked.code).toBe(124)
    const removed = actors(h, ['lock', 'release', 'LQ', '--holder', 'ghost'])
    expect(removed.code, removed.stderr).toBe(0)
    expect(removed.stderr).toContain('ghost left the queue of lock LQ')
    const taken = actors(h, ['lock', 'acquire', 'LQ', '--holder', 'me', '--lease', '1m', '--wait', '5s'])
    expect(taken.code, taken.stderr).toBe(0)
    // A holder that neither holds nor waits is still refused (exit 3).
    expect(actors(h, ['lock', 'release', 'LQ', '--holder', 'nobody']).code).toBe(3)
  }, 30_000)
})
