/**
 * The supervision host's socket is reachable by every Run of its state root
 * (red-team 10 H-1, H-3, M-1): neither end may believe the other by what
 * it says. The host takes a Run only from a launcher outside every Run that
 * holds the Run's dir open, with that launcher's own environment; a
 * launcher hands a Run only to a host outside every Run, under its own
 * kernel settings, that alone listens at the socket. Real Runs as the
 * adversary, cgroup containment where the machine allows (the defaults).
 */
import {spawn, spawnSync} from 'node:child_process'
import {existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {
  actors,
  BIN,
  cliEnv,
  commandStarted,
  homesPerTest,
  processAlive,
  readJson,
  waitFor,
  waitForResult,
} from './helpers.js'

const newHome = homesPerTest('actors-trust-host-')
const HOST = {ACTORS_SUPERVISION: 'host'}
/** An attacker Run with a supervisor of its own: the host it attacks is not the one supervising it. */
const PER_RUN = {ACTORS_SUPERVISION: 'run'}
const SUPERVISOR = join(BIN, '..', '..', 'dist', 'supervisor.cjs')

function launch(home: string, args: string[], env: NodeJS.ProcessEnv = HOST): {run: string; state_dir: string} {
  const r = actors(home, ['run', '--json', ...args], {env})
  expect(r.code, r.stderr).toBe(0)
  return r.json
}

const started = (dir: string) => commandStarted(dir)

/**
 * A script that copies a Run's record (argv[2], else its own Run's) as a new top-level Run `esc` of the state root
 * (argv[3], else ACTORS_HOME) that would touch `marker`, and hands it to the host with itself as the launcher and an
 * environment of its own stating; the host's answer is written to `answer`.
 */
function writeCraft(home: string, marker: string, answer: string): string {
  const craft = join(home, 'craft.cjs')
  writeFileSync(
    craft,
    `const fs=require('fs'),net=require('net'),{randomUUID}=require('crypto')
const from=process.argv[2]||process.env.ACTORS_STATE_DIR+'/run.json',home=process.argv[3]||process.env.ACTORS_HOME
const j=JSON.parse(fs.readFileSync(from)),dir=home+'/runs/esc'
for (const k of ['pid','process_identity','started_at','containment','children_processes','child_pid','pgid','parent']) delete j[k]
Object.assign(j,{run:'esc',root:'esc',depth:0,run_instance_id:randomUUID(),status:'queued',state_dir:dir,argv:['touch',${JSON.stringify(marker)}]})
j.plan={mode:'single',steps:[j.argv]}
fs.mkdirSync(dir,{recursive:true});fs.writeFileSync(dir+'/run.json',JSON.stringify(j))
const fd=fs.openSync(dir,'r'),st=fs.readFileSync('/proc/self/stat','utf8')
const launcher={pid:process.pid,start:st.slice(st.lastIndexOf(')')+2).split(' ')[19],boot:fs.readFileSync('/proc/sys/kernel/random/boot_id','utf8').trim()}
const s=net.connect(home+'/supervision/host.sock',()=>s.write(JSON.stringify({dir,launcher,env:{PATH:'/usr/bin:/bin'}})+'\\n'))
let text='';s.on('data',(c)=>text+=c);s.on('close',()=>{fs.writeFileSync(${JSON.stringify(answer)},text);fs.closeSync(fd)})
`,
  )
  return craft
}

describe('the supervision host and the Runs that can reach it', () => {
  it('a Run that asks the host to start a Run dir it made (as its own launcher) is declined; nothing of it runs', async () => {
    const home = newHome()
    const keep = launch(home, ['--name', 'keep', '--', 'sleep', '20'])
    await started(keep.state_dir)
    const marker = join(home, 'escaped')
    const answer = join(home, 'answer')
    // A copy of its own record as a new Run `esc` with no parent, handed over with this process as the launcher.
    const craft = writeCraft(home, marker, answer)
    const attacker = actors(home, ['run', '--name', 'att', '--wait', '--', process.execPath, craft], {env: HOST})
    expect(attacker.code, attacker.stderr).toBe(0)
    expect(JSON.parse(readFileSync(answer, 'utf8'))).toMatchObject({declined: true})
    expect(readFileSync(answer, 'utf8')).toContain('the launcher runs inside a Run')
    await new Promise((resolve) => setTimeout(resolve, 500))
    expect(existsSync(marker)).toBe(false)
    expect(readJson(join(home, 'runs', 'esc', 'run.json')).pid).toBeUndefined()
    expect(actors(home, ['control', keep.run, 'kill']).code).toBe(0)
  })

  it('a host a Run started inside its own unit gets no later launch: the Run ends, that launch lives on', async () => {
    const home = newHome()
    const att = launch(
      home,
      ['--name', 'att', '--', 'sh', '-c', `${process.execPath} ${SUPERVISOR} --host "$ACTORS_HOME" & sleep 60`],
      PER_RUN,
    )
    const planted = await waitFor(
      () => existsSync(join(home, 'supervision', 'host.json')) && readJson(join(home, 'supervision', 'host.json')),
      10_000,
      "the Run's host",
    )
    const vic = launch(home, ['--name', 'vic', '--', 'sleep', '30'])
    const meta = await started(vic.state_dir)
    expect(meta.pid).not.toBe(planted.identity.pid)
    expect(actors(home, ['control', att.run, 'kill']).code).toBe(0)
    await waitFor(() => !processAlive(planted.identity.pid) || undefined, 5000, "the Run's host ended with it")
    expect(actors(home, ['inspect', vic.run, '--json']).json.status).toBe('running')
    expect(meta.children_processes.every((c: any) => processAlive(c.pid))).toBe(true)
    expect(actors(home, ['control', vic.run, 'kill']).code).toBe(0)
  })

  // A listener a Run put in the host's place answers every hand-over with the real host's pid, as if it had started
  // the Run: at host.sock once the file is removed, or bound elsewhere and renamed over it (/proc/net/unix still
  // lists the host at host.sock then).
  for (const [how, mode] of [
    ['a listener a Run put at the host socket', 'replace'],
    ["a Run's socket renamed over host.sock", 'rename'],
  ]) {
    it(`${how} is asked nothing: the launch still runs its command to its end`, async () => {
      const home = newHome()
      const keep = launch(home, ['--name', 'keep', '--', 'sleep', '20'])
      const host = (await started(keep.state_dir)).pid
      const asked = join(home, 'asked')
      const fake = join(home, 'fake.cjs')
      writeFileSync(
        fake,
        `const fs=require('fs'),net=require('net'),d=process.env.ACTORS_HOME+'/supervision',rename=process.argv[2]==='rename'
const at=rename?d+'/fake.sock':d+'/host.sock'
if(!rename)fs.rmSync(at,{force:true})
net.createServer((s)=>{s.on('data',(c)=>{fs.appendFileSync(${JSON.stringify(asked)},String(c));s.end(JSON.stringify({pid:${host}})+'\\n')})}).listen(at,()=>{if(rename)fs.renameSync(at,d+'/host.sock');fs.writeFileSync(d+'/fake.up','')})
`,
      )
      launch(home, ['--name', 'att', '--', process.execPath, fake, mode], PER_RUN)
      await waitFor(() => existsSync(join(home, 'supervision', 'fake.up')), 10_000, 'the fake listener')
      const vic = launch(home, ['--name', 'vic', '--', 'sh', '-c', 'sleep 0.3; exit 5'])
      expect(await waitForResult(vic.state_dir, 10_000)).toMatchObject({status: 'failed', exit_code: 5})
      expect(existsSync(asked)).toBe(false)
      for (const run of ['att', keep.run]) actors(home, ['control', run, 'kill'])
    })
  }

  // host.lock is taken by this root's hosts alone: pid 1, or a genuine actors command that is no host (red-team 12
  // N2-L1), named there by a Run, is no holder to wait for.
  const LOCK_HOLDERS: Array<[string, (home: string) => Promise<{pid: number; done: () => void}>]> = [
    ['pid 1', async () => ({pid: 1, done: () => {}})],
    [
      'a genuine `actors wait`',
      async (home) => {
        expect(actors(home, ['run', '--name', 'keep', '--', 'sleep', '30']).code).toBe(0)
        const wait = spawn(process.execPath, [BIN, 'wait', 'keep'], {env: cliEnv(home), stdio: 'ignore'})
        const pid = wait.pid!
        await waitFor(() => readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('wait'), 10_000, 'actors wait')
        const done = () => {
          wait.kill('SIGKILL')
          actors(home, ['control', 'keep', 'kill'])
        }
        return {pid, done}
      },
    ],
  ]
  for (const [name, startHolder] of LOCK_HOLDERS) {
    it(`a host.lock a Run wrote naming ${name} delays no launch: the host breaks it and takes the Run`, async () => {
      const home = newHome()
      const holder = await startHolder(home)
      const supervision = join(home, 'supervision')
      mkdirSync(supervision, {recursive: true, mode: 0o700})
      const start = readFileSync(`/proc/${holder.pid}/stat`, 'utf8').split(') ')[1].split(' ')[19]
      const boot = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim()
      symlinkSync(JSON.stringify({pid: holder.pid, start, boot}), join(supervision, 'host.lock'))
      const began = Date.now()
      const r = launch(home, ['--name', 'after', '--', 'sleep', '1'])
      // Not the 10 s a launcher tries a host for, nor the host's 5 s lock wait.
      expect(Date.now() - began).toBeLessThan(4000)
      const supervisor = (await started(r.state_dir)).pid
      expect(readFileSync(`/proc/${supervisor}/cmdline`, 'utf8').split('\0')[2]).toBe('--host')
      expect(await waitForResult(r.state_dir)).toMatchObject({status: 'done'})
      holder.done()
    })
  }

  // A helper a Run cuts loose (a double fork, a cleared environment) keeps the Run's process group and session:
  // tracked containment, where no cgroup shows it (red-team 11 N-H1, N-H2).
  // With setsid as well it leads a group and session of its own under the reaper, and keeps only the Run's
  // directory and its start during the Run (red-team 12 N2-H1).
  const TRACKED = {...HOST, ACTORS_CONTAINMENT: 'tracked'}
  const ESCAPES = [
    ['a double fork', 'exec', 'the launcher runs inside a Run'],
    ['setsid', 'exec setsid', 'the launcher may be a helper a Run cut loose'],
    // Its records hidden as well (red-team 13 N3-H1): no index marker, run.json's cwd elsewhere; its step wrapper
    // still works in the Run's directory since the step began.
    [
      'setsid, its records rewritten',
      `rm -f "$ACTORS_HOME"/index/*@*; node -e 'const f=process.env.ACTORS_STATE_DIR+"/run.json",j=require(f);j.cwd="/";require("fs").writeFileSync(f,JSON.stringify(j))'; exec setsid`,
      'the launcher may be a helper a Run cut loose',
    ],
  ] as const
  for (const [how, prefix, declined] of ESCAPES) {
    const escaped = (command: string) =>
      `( ( ${prefix} env -i PATH=/usr/bin:/bin ACTORS_CONTAINMENT=tracked ${command} ) & ); exec sleep 30`

    it(`a helper a Run cut loose (${how}) is no launcher the host takes a Run from (tracked)`, async () => {
      const home = newHome()
      const keep = launch(home, ['--name', 'keep', '--', 'sleep', '20'], TRACKED)
      await started(keep.state_dir)
      const [marker, answer] = [join(home, 'escaped'), join(home, 'answer')]
      // The Run's own record copied as a top-level Run `esc`, handed over by the helper as its own launcher.
      const craft = writeCraft(home, marker, answer)
      const helper = escaped(`${process.execPath} ${craft} "$ACTORS_STATE_DIR/run.json" "$ACTORS_HOME"`)
      const att = launch(home, ['--name', 'att', '--', 'sh', '-c', helper], {...PER_RUN, ACTORS_CONTAINMENT: 'tracked'})
      await waitFor(() => existsSync(answer), 10_000, "the host's answer")
      expect(readFileSync(answer, 'utf8')).toContain(declined)
      await new Promise((resolve) => setTimeout(resolve, 500))
      expect(existsSync(marker)).toBe(false)
      for (const run of [att.run, keep.run]) actors(home, ['control', run, 'kill'], {env: TRACKED})
    })

    it(`a host a helper a Run cut loose (${how}) started is handed no Run (tracked)`, async () => {
      const home = newHome()
      const helper = escaped(`${process.execPath} ${SUPERVISOR} --host "$ACTORS_HOME"`)
      const att = launch(home, ['--name', 'att', '--', 'sh', '-c', helper], {...PER_RUN, ACTORS_CONTAINMENT: 'tracked'})
      const planted = await waitFor(
        () => existsSync(join(home, 'supervision', 'host.json')) && readJson(join(home, 'supervision', 'host.json')),
        10_000,
        "the Run's host",
      )
      const vic = launch(home, ['--name', 'vic', '--', 'sleep', '1'], TRACKED)
      expect((await started(vic.state_dir)).pid).not.toBe(planted.identity.pid)
      expect(await waitForResult(vic.state_dir)).toMatchObject({status: 'done'})
      actors(home, ['control', att.run, 'kill'], {env: TRACKED})
      process.kill(planted.identity.pid, 'SIGKILL')
    })
  }

  // What Node or the loader reads at start to run other code (an OpenSSL engine is a library it loads).
  const INJECTORS: Array<[string, (evil: string) => string]> = [
    ['NODE_OPTIONS', (evil) => `--require ${evil}`],
    ['OPENSSL_CONF', () => '/dev/null'],
    ['LD_AUDIT', () => '/nonexistent-audit.so'],
  ]
  for (const [name, value] of INJECTORS) {
    it(`a host given ${name} is handed no Run, wherever it was started`, async () => {
      const home = newHome()
      const loaded = join(home, 'loaded')
      const evil = join(home, 'evil.cjs')
      writeFileSync(evil, `require('fs').appendFileSync(${JSON.stringify(loaded)}, 'x')\n`)
      const host = spawn(process.execPath, [SUPERVISOR, '--host', home], {
        env: {...cliEnv(home), [name]: value(evil), ACTORS_SUPERVISION_IDLE_MS: '60000'},
        stdio: 'ignore',
        detached: true,
      })
      try {
        await waitFor(() => existsSync(join(home, 'supervision', 'host.json')), 10_000, 'the injected host')
        if (name === 'NODE_OPTIONS') expect(existsSync(loaded)).toBe(true)
        const vic = launch(home, ['--name', 'vic', '--', 'sleep', '1'])
        expect((await started(vic.state_dir)).pid).not.toBe(host.pid)
        expect(await waitForResult(vic.state_dir)).toMatchObject({status: 'done'})
      } finally {
        host.kill('SIGKILL')
      }
    })
  }

  // A host is started with an allowed few variables, and one with any other is a stand-in: a list of what to
  // refuse misses the next injector (red-team 12 N2-H2: LD_AUDIT, OPENSSL_CONF came after NODE_OPTIONS).
  for (const extra of [{}, {LD_LIBRARY_PATH: '/nonexistent-libs'}]) {
    const named = Object.keys(extra)[0]
    it(`a host started with a host's variables${named ? ` and ${named}` : ''} is ${named ? 'handed no Run' : 'handed the Run'}`, async () => {
      const home = newHome()
      const own = Object.entries(cliEnv(home)).filter(([name]) => /^(PATH|HOME|ACTORS_\w+)$/.test(name))
      // As a launcher starts one: in the supervision dir, handed to the reaper once its starter is gone.
      const cwd = join(home, 'supervision')
      mkdirSync(cwd, {mode: 0o700})
      const env = {...Object.fromEntries(own), ...extra, ACTORS_SUPERVISION_IDLE_MS: '60000'}
      spawnSync('sh', ['-c', 'setsid "$0" "$@" >/dev/null 2>&1 &', process.execPath, SUPERVISOR, '--host', home], {
        cwd,
        env,
      })
      const host = await waitFor(() => readJson(join(cwd, 'host.json')).identity?.pid, 10_000, 'the host')
      try {
        const vic = launch(home, ['--name', 'vic', '--', 'sleep', '1'])
        const supervisor = (await started(vic.state_dir)).pid
        if (named) expect(supervisor).not.toBe(host)
        else expect(supervisor).toBe(host)
        expect(await waitForResult(vic.state_dir)).toMatchObject({status: 'done'})
      } finally {
        process.kill(host, 'SIGKILL')
      }
    })
  }

  it('a host a Run stopped (SIGSTOP) delays no launch: it gets a supervisor of its own at once', async () => {
    const home = newHome()
    const keep = launch(home, ['--name', 'keep', '--', 'sleep', '20'])
    const host = (await started(keep.state_dir)).pid
    launch(home, ['--name', 'att', '--', 'sh', '-c', `kill -STOP ${host}; exec sleep 30`], PER_RUN)
    await waitFor(() => readFileSync(`/proc/${host}/stat`, 'utf8').split(') ')[1].startsWith('T'), 10_000, 'stopped')
    try {
      const began = Date.now()
      const vic = launch(home, ['--name', 'vic', '--', 'sleep', '0.5'])
      expect(Date.now() - began).toBeLessThan(5000)
      expect((await started(vic.state_dir)).pid).not.toBe(host)
      expect(await waitForResult(vic.state_dir)).toMatchObject({status: 'done'})
    } finally {
      process.kill(host, 'SIGCONT')
    }
    for (const run of ['att', keep.run]) actors(home, ['control', run, 'kill'])
  })
})
