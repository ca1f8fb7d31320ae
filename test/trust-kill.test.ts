/**
 * A Run cannot lie to the kernel about where to act, nor block or dodge its
 * own end (issue 35: Deliver 1, and "A Run hides" of Deliver 3). Real Runs as
 * the adversary, under the cgroup a Run gets on this machine and again under
 * tracked containment: one that keeps a link at its own children.jsonl or
 * result.json, or garbage in its run.json, is still ended by `control kill`,
 * `control stop` and `close` (the unit first, the damage named after); one
 * that deletes its state dir is still listed and killable; one that rewrites
 * run.json `containment` to another target gets a refusal naming run.json and
 * the other target is untouched. The Run's processes are found by a unique
 * token in their command line, never by name.
 */
import {spawn} from 'node:child_process'
import {
  existsSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  readlinkSync,
  renameSync,
  rmdirSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs'
import {basename, join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {discoverCgroupBases} from '../src/lib/kernel/containment/cgroup-fs.js'
import {
  actors,
  BIN,
  homesPerTest,
  parentOf,
  processState,
  readJson,
  ROOT,
  survivors,
  uniqueToken,
  waitFor,
  isLink,
  CONTAINMENT_MODES,
} from './helpers.js'
import {recordedKillGraceMs} from '../src/lib/base/records/run.js'
import {ENDED_SUPERVISOR_TITLE} from '../src/lib/base/platform/kernel-process.js'

const home = homesPerTest('actors-trust-')

/** A token nobody else uses: the command line of this test's processes carries it. */
const token = () => uniqueToken('trust')

/** A lock file's content naming process `pid` (its identity, as the kernel writes one). */
function identityOf(pid: number): string {
  const start = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')[19]
  const boot = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim()
  return JSON.stringify({pid, start, boot})
}

/** What a Run does to its own state dir, and how to tell it has done it. */
const ATTACKS = {
  'a link at children.jsonl': {
    file: 'children.jsonl',
    script: 'while :; do ln -sfn /dev/null "$ACTORS_STATE_DIR/children.jsonl"; sleep 0.01; done',
    done: (dir: string) => isLink(join(dir, 'children.jsonl')),
  },
  'a link at result.json': {
    file: 'result.json',
    script: 'while :; do ln -sfn /dev/null "$ACTORS_STATE_DIR/result.json"; sleep 0.01; done',
    done: (dir: string) => isLink(join(dir, 'result.json')),
  },
  'the lock of its own state dir': {
    file: '.lock',
    // The lock names the Run's own shell as its (live) holder: never stale, so a waiter waits its whole wait.
    script:
      'until ln -s "{\\"pid\\":$$,\\"start\\":\\"$(cut -d" " -f22 /proc/$$/stat)\\",\\"boot\\":\\"$(cat /proc/sys/kernel/random/boot_id)\\"}" "$ACTORS_STATE_DIR/.lock" 2>/dev/null; do sleep 0.01; done; while :; do sleep 1; done',
    done: (dir: string) => isLink(join(dir, '.lock')),
    // Not after the lock's whole wait (30 s): the Run's own lock is not waited for past a moment.
    withinMs: 15_000,
  },
  'a state-dir lock naming pid 1': {
    file: '.lock',
    // pid 1 lives for ever and runs no part of actors: its lock is nobody's to wait for (red-team pass 10 M-2).
    script:
      'until ln -s "{\\"pid\\":1,\\"start\\":\\"$(sed "s/.*) //" /proc/1/stat | cut -d" " -f20)\\",\\"boot\\":\\"$(cat /proc/sys/kernel/random/boot_id)\\"}" "$ACTORS_STATE_DIR/.lock" 2>/dev/null; do sleep 0.01; done; while :; do sleep 1; done',
    done: (dir: string) => isLink(join(dir, '.lock')),
    withinMs: 10_000,
  },
  'its own run.json marked done': {
    file: 'run.json',
    script: `while :; do sed -i 's/"status": "running"/"status": "done"/' "$ACTORS_STATE_DIR/run.json"; sleep 0.01; done`,
    done: (dir: string) => readJson(join(dir, 'run.json')).status === 'done',
  },
  'garbage in its live run.json': {
    file: 'run.json',
    script: 'while :; do echo garbage > "$ACTORS_STATE_DIR/run.json"; sleep 0.01; done',
    done: (dir: string) => readFileSync(join(dir, 'run.json'), 'utf8').startsWith('garbage'),
  },
} as const

/** Each end, with the attacks it is tried against (every attack for kill; the issue's repro for stop and close). */
const ENDS: Array<{verb: string; args: (run: string) => string[]; attacks: Array<keyof typeof ATTACKS>}> = [
  {verb: 'control kill', args: (run) => ['control', run, 'kill'], attacks: Object.keys(ATTACKS) as any},
  {
    verb: 'control stop',
    args: (run) => ['control', run, 'stop'],
    attacks: ['a link at children.jsonl', 'a state-dir lock naming pid 1'],
  },
  {
    verb: 'close',
    args: (run) => ['close', run],
    attacks: ['a link at children.jsonl', 'a link at result.json', 'a state-dir lock naming pid 1'],
  },
]

/** Launch `script` (marked with `tag`) as Run `name`; resolves with its state dir once the command runs. */
async function launch(h: string, name: string, tag: string, script: string, env: NodeJS.ProcessEnv): Promise<string> {
  const r = actors(h, ['run', '--name', name, '--json', '--', 'sh', '-c', `: ${tag}; ${script}`], {env})
  expect(r.code, r.stderr).toBe(0)
  await waitFor(() => survivors(tag).length > 0, 10_000, `${name} running`)
  return r.json.state_dir
}

describe.each(CONTAINMENT_MODES)('nothing in the state dir blocks an end ($mode)', ({env, skip}) => {
  for (const end of ENDS) {
    for (const attack of end.attacks) {
      it.skipIf(skip)(
        `${end.verb} ends a Run that keeps ${attack}`,
        async () => {
          const h = home()
          const tag = token()
          const {file, script, done} = ATTACKS[attack]
          const dir = await launch(h, 'selfprot', tag, script, env)
          await waitFor(() => done(dir), 10_000, attack)
          const started = Date.now()
          const r = actors(h, end.args('selfprot'), {env, timeout: 60_000})
          const took = Date.now() - started
          // Ended first: nothing of the unit is left when the command returns, whatever it says after.
          expect(survivors(tag), `${end.verb}: ${r.stderr}`).toEqual([])
          expect([0, 1], r.stderr).toContain(r.code)
          if (r.code === 1) expect(r.stderr).toContain(join(dir, file))
          const within = (ATTACKS[attack] as {withinMs?: number}).withinMs
          if (within !== undefined) expect(took).toBeLessThan(within)
        },
        40_000,
      )
    }
  }
})

describe.each(CONTAINMENT_MODES)('nothing in the state dir blocks a timeout ($mode)', ({env, skip}) => {
  // Already so before issue 35 (the supervisor ends the unit it made, not one read back): kept from regressing.
  it.skipIf(skip)(
    'every attack above, and a deleted state dir, ends at its --timeout',
    async () => {
      const h = home()
      const scripts = {
        ...Object.fromEntries(Object.entries(ATTACKS).map(([name, attack]) => [name, attack.script])),
        'a deleted state dir': 'rm -rf "$ACTORS_STATE_DIR"; while :; do sleep 1; done',
      }
      const tags = Object.keys(scripts).map(() => token())
      for (const [i, script] of Object.values(scripts).entries()) {
        const r = actors(
          h,
          ['run', '--name', `t${i}`, '--timeout', '2s', '--', 'sh', '-c', `: ${tags[i]}; ${script}`],
          {env},
        )
        expect(r.code, r.stderr).toBe(0)
        // Seen running, so its end below is its timeout's doing.
        await waitFor(() => survivors(tags[i]).length > 0, 10_000, `t${i} running`)
      }
      await waitFor(() => tags.every((tag) => survivors(tag).length === 0), 20_000, 'every Run ended by its timeout')
    },
    40_000,
  )
})

/**
 * Launch Run `selfprot`, which writes the identity of process `pid` into its own `lock`, and kill it: the kill ends
 * its command within `withinMs` (not the lock's whole wait), exit 1, saying `said` of the holder.
 */
async function killWithLockNaming(
  h: string,
  pid: number,
  said: string,
  withinMs: number,
  lock = '.lock',
): Promise<void> {
  const tag = token()
  const script = `until ln -s '${identityOf(pid)}' "$ACTORS_STATE_DIR/${lock}" 2>/dev/null; do sleep 0.01; done; while :; do sleep 1; done`
  const dir = await launch(h, 'selfprot', tag, script, {})
  await waitFor(() => isLink(join(dir, lock)), 10_000, 'the lock planted')
  const started = Date.now()
  const r = actors(h, ['control', 'selfprot', 'kill'], {timeout: 90_000})
  expect(survivors(tag), r.stderr).toEqual([])
  expect(Date.now() - started).toBeLessThan(withinMs)
  expect(r.code, r.stderr).toBe(1)
  expect(r.stderr).toContain(said)
}

/** Launch Run `neighbour`, whose command is a genuine `actors wait` (for itself); resolves with that process's pid. */
async function neighbourWait(h: string): Promise<number> {
  const dir = await launch(h, 'neighbour', token(), `echo $$ > "$ACTORS_STATE_DIR/me"; exec ${BIN} wait neighbour`, {})
  const pid = await waitFor(
    () => existsSync(join(dir, 'me')) && Number(readFileSync(join(dir, 'me'), 'utf8')),
    10_000,
    'its pid',
  )
  await waitFor(() => readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('wait'), 10_000, 'actors wait')
  return pid
}

describe('a lock kept in the name of a lookalike of actors', () => {
  // A neighbour Run starts a process that carries the kernel's script in its command line; Run C writes that
  // process's identity into its own .lock. Nothing but actors itself takes that lock (red-team 11 N-M2).
  const LOOKALIKES = {
    'node -e with a dist path': (tag: string) =>
      `exec node -e "setInterval(()=>{},1e9)" ${join(ROOT, 'dist', 'cli.cjs')} ${tag}`,
    'a copy of yes named node running bin/actors': (tag: string) =>
      `mkdir -p "$ACTORS_STATE_DIR/fake" && cp "$(command -v yes)" "$ACTORS_STATE_DIR/fake/node" && exec "$ACTORS_STATE_DIR/fake/node" ${BIN} ${tag} >/dev/null`,
  }
  for (const [name, lookalike] of Object.entries(LOOKALIKES)) {
    it(`control kill ends C at once: ${name}`, async () => {
      const h = home()
      const tagN = token()
      await launch(h, 'neighbour', tagN, lookalike(tagN), {})
      // The lookalike itself, not the step wrapper whose script names the tag too.
      const isLookalike = (p: number) => basename(readlinkSync(`/proc/${p}/exe`)) === 'node'
      const pid = await waitFor(() => survivors(tagN).find(isLookalike), 10_000, 'the lookalike')
      await killWithLockNaming(h, pid, 'is no process of actors', 10_000)
      actors(h, ['control', 'neighbour', 'kill'])
    }, 60_000)
  }
})

describe('a lock kept in the name of a genuine actors process', () => {
  // Run C writes the identity of a real actors command into its own .lock: one running inside a neighbour Run
  // (`actors wait`), or one stopped (`actors logs --follow`, SIGSTOPped). Neither lets go (red-team 12 N2-M2).
  const HOLDERS: Array<[string, string, (h: string) => Promise<{pid: number; done: () => void}>]> = [
    [
      "`actors wait` in a neighbour Run's unit",
      'a process of another Run',
      async (h) => ({pid: await neighbourWait(h), done: () => actors(h, ['control', 'neighbour', 'kill'])}),
    ],
    [
      '`actors logs --follow`, stopped',
      'which is stopped',
      async (h) => {
        const follow = spawn(process.execPath, [BIN, 'logs', 'keep', '--follow'], {
          env: {...process.env, ACTORS_HOME: h},
          stdio: 'ignore',
        })
        const pid = follow.pid!
        await waitFor(() => readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('logs'), 10_000, 'actors logs')
        process.kill(pid, 'SIGSTOP')
        await waitFor(() => processState(pid) === 'T', 10_000, 'stopped')
        return {pid, done: () => follow.kill('SIGKILL')}
      },
    ],
    [
      "the user's own `actors wait`, in no Run",
      'for over 10s',
      async (h) => {
        const wait = spawn(process.execPath, [BIN, 'wait', 'keep'], {
          env: {...process.env, ACTORS_HOME: h},
          stdio: 'ignore',
        })
        const pid = wait.pid!
        await waitFor(() => readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('wait'), 10_000, 'actors wait')
        return {pid, done: () => wait.kill('SIGKILL')}
      },
    ],
  ]
  // .children.lock too (red-team 13 N3-M1): a child launched from inside holds it while it launches, a process of
  // another Run never.
  const CASES = [...HOLDERS.map((holder) => [...holder, '.lock'] as const), [...HOLDERS[0], '.children.lock'] as const]
  for (const [name, said, startHolder, lock] of CASES) {
    it(`control kill ends C within seconds: ${name}, in ${lock}`, async () => {
      const h = home()
      expect(actors(h, ['run', '--name', 'keep', '--', 'sleep', '300']).code).toBe(0)
      const holder = await startHolder(h)
      // Held past its grace (2 s in a Run's unit, 10 s for any other), not the lock's whole wait of 30 s or more.
      await killWithLockNaming(h, holder.pid, said, said === 'for over 10s' ? 25_000 : 15_000, lock)
      holder.done()
      actors(h, ['control', 'keep', 'kill'])
    }, 90_000)
  }
})

describe('a stop that cannot go the usual way', () => {
  // The unit is ended by facts, as a stop ends it: SIGTERM first, so the command's own handler runs.
  it('sends SIGTERM first: the TERM handler of a Run that writes garbage into its run.json runs', async () => {
    const h = home()
    const tag = token()
    const script =
      'trap "echo trapped > \\"$ACTORS_STATE_DIR/../trapped-$$\\"; exit 0" TERM; while :; do echo garbage > "$ACTORS_STATE_DIR/run.json"; sleep 0.01; done'
    const dir = await launch(h, 'garbled', tag, script, {})
    await waitFor(() => readFileSync(join(dir, 'run.json'), 'utf8').startsWith('garbage'), 10_000, 'garbage')
    const r = actors(h, ['control', 'garbled', 'stop'], {timeout: 60_000})
    expect(survivors(tag), r.stderr).toEqual([])
    expect(r.code, r.stderr).toBe(1)
    expect(r.stderr).toMatch(/its unit was stopped first: SIGTERM to \d+ process/)
    expect(readdirSync(join(h, 'runs')).some((name) => name.startsWith('trapped-'))).toBe(true)
  }, 60_000)
})

describe("a neighbour's process named in another Run's lock", () => {
  // Red-team 13 N3-M2: Run N names its own `actors wait` in Run B's .lock. The user's stop of B must still be a
  // stop (B's TERM handler runs), and B's record must not read `running` for the lock's whole wait once B is gone.
  it('control B stop removes that lock and stops B the usual way: its TERM handler runs, recorded cancelled', async () => {
    const h = home()
    const waiter = await neighbourWait(h)
    const tagB = token()
    const trap = 'trap "echo trapped > \\"$ACTORS_STATE_DIR/trapped\\"; exit 0" TERM; while :; do sleep 0.1; done'
    const b = await launch(h, 'b', tagB, trap, {})
    // As the Run's own scripts plant it: until the kernel's own take of the moment lets go.
    await waitFor(
      () => {
        try {
          symlinkSync(identityOf(waiter), join(b, '.lock'))
          return true
        } catch {
          return false
        }
      },
      10_000,
      'the lock planted',
    )
    const r = actors(h, ['control', 'b', 'stop'], {timeout: 60_000})
    expect(r.code, r.stderr).toBe(1)
    expect(r.stderr).toContain(`${join(b, '.lock')} is held by pid ${waiter}, a process of another Run`)
    expect(r.stderr).toContain('removed that lock, and b was stopped the usual way')
    expect(survivors(tagB)).toEqual([])
    expect(existsSync(join(b, 'trapped'))).toBe(true)
    expect(readJson(join(b, 'run.json'))).toMatchObject({status: 'cancelled'})
    actors(h, ['control', 'neighbour', 'kill'])
  }, 60_000)
})

describe('locks whose holders change', () => {
  // Red-team 14 N4-H1: the grace restarted with each new holder, so a Run that named a fresh genuine actors process in
  // its lock every 1.5 s was never killed. One clock bounds the whole wait.
  const identity = (pid: string) =>
    `"{\\"pid\\":${pid},\\"start\\":\\"$(cut -d" " -f22 /proc/${pid}/stat)\\",\\"boot\\":\\"$(cat /proc/sys/kernel/random/boot_id)\\"}"`
  /** Launch Run `name` (`script`, marked `tag`) that keeps `lock`, and kill it: ended within 20 s, exit 1. */
  async function killKeeping(h: string, name: string, tag: string, script: string, lock: string) {
    await launch(h, name, tag, script, {})
    await waitFor(() => isLink(join(h, 'runs', name, lock)), 10_000, 'the lock planted')
    const started = Date.now()
    const r = actors(h, ['control', name, 'kill'], {timeout: 60_000})
    expect(survivors(tag), r.stderr).toEqual([])
    expect(Date.now() - started).toBeLessThan(20_000)
    expect(r.code, r.stderr).toBe(1)
    return r
  }
  it('a fresh holder named every 1.5 s keeps kill away for 10 s at most', async () => {
    const h = home()
    expect(actors(h, ['run', '--name', 'keep', '--', 'sleep', '300']).code).toBe(0)
    const tag = token()
    const script = `D="$ACTORS_STATE_DIR"; while :; do ${BIN} wait keep >/dev/null 2>&1 & a=$!; sleep 0.5; ln -sfn ${identity('$a')} "$D/.lock"; sleep 1; done`
    const r = await killKeeping(h, 'flipper', tag, script, '.lock')
    expect(r.stderr).toContain(join(h, 'runs', 'flipper', '.lock'))
    actors(h, ['control', 'keep', 'kill'])
  }, 90_000)

  // Red-team 14 N4-M1: the Run's own process in its own .children.lock was waited for in full (30 s, then busy).
  it("the Run's own actors process that is no launch, in its .children.lock, keeps kill away for 2 s, not 30", async () => {
    const h = home()
    expect(actors(h, ['run', '--name', 'keep', '--', 'sleep', '300']).code).toBe(0)
    const tag = token()
    const script = `${BIN} wait keep >/dev/null 2>&1 & a=$!; sleep 0.5; ln -s ${identity('$a')} "$ACTORS_STATE_DIR/.children.lock"; while :; do sleep 1; done`
    const r = await killKeeping(h, 'own', tag, script, '.children.lock')
    expect(r.stderr).toContain('a process of the Run itself')
    actors(h, ['control', 'keep', 'kill'])
  }, 90_000)
})

describe('a lock held by a supervisor that has written its end', () => {
  // A supervisor renames its process once its end is written, and lets go of the Run's lock a moment later. A close
  // in that moment took the renamed process for a stranger to actors and refused (mcp.test.ts, once in CI).
  it('is waited for: stop ends the Run as usual, exit 0', async () => {
    const h = home()
    expect(actors(h, ['run', '--name', 'keep', '--', 'sleep', '300']).code).toBe(0)
    const lock = join(h, 'runs', 'keep', '.lock')
    const holdOneSecond = `
      const fs = require('node:fs')
      process.title = ${JSON.stringify(ENDED_SUPERVISOR_TITLE)}
      const start = fs.readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' ')[19]
      const boot = fs.readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim()
      fs.symlinkSync(JSON.stringify({pid: process.pid, start, boot}), ${JSON.stringify(lock)})
      console.log('held')
      setTimeout(() => fs.unlinkSync(${JSON.stringify(lock)}), 1000)`
    const holder = spawn(process.execPath, ['-e', holdOneSecond], {env: {PATH: process.env.PATH}})
    await new Promise((held) => holder.stdout.once('data', held))
    expect(readFileSync(`/proc/${holder.pid}/cmdline`, 'utf8')).toContain(ENDED_SUPERVISOR_TITLE)
    const r = actors(h, ['control', 'keep', 'stop'])
    expect(r.code, r.stderr).toBe(0)
    expect(readJson(join(h, 'runs', 'keep', 'run.json')).status).toBe('cancelled')
  }, 30_000)
})

describe.each(CONTAINMENT_MODES)('a Run cannot hide ($mode)', ({env, skip}) => {
  it.skipIf(skip)(
    'one that deleted its state dir is still listed, and `control RUN kill` ends it',
    async () => {
      const h = home()
      const tag = token()
      // Until it is gone: a file the supervisor writes meanwhile (an atomic run.json update) can make one rm -rf
      // meet a directory that is not empty.
      const script =
        'while [ -e "$ACTORS_STATE_DIR" ]; do rm -rf "$ACTORS_STATE_DIR"; sleep 0.05; done; while :; do sleep 1; done'
      const dir = await launch(h, 'gone', tag, script, env)
      await waitFor(() => !existsSync(dir), 10_000, 'state dir deleted')
      for (const args of [
        ['inspect', '--json'],
        ['inspect', '--status', 'running', '--json'],
      ]) {
        const listed = actors(h, args, {env})
        const entry = listed.json.damaged.find((d: {state_dir: string}) => d.state_dir === dir)
        expect(entry, `${args.join(' ')}: ${listed.stdout}`).toBeDefined()
        expect(entry.error).toMatch(/state dir is gone but Run gone .* still runs: pids \d+/)
      }
      const human = actors(h, ['inspect'], {env})
      expect(human.stderr).toContain('actors control gone kill')
      const one = actors(h, ['inspect', 'gone'], {env})
      expect(one.code, one.stderr).toBe(1)
      expect(one.stderr).toContain(`${dir}: state dir is gone but Run gone`)

      const r = actors(h, ['control', 'gone', 'kill'], {env})
      expect(survivors(tag), r.stderr).toEqual([])
      expect(r.code).toBe(1)
      expect(r.stderr).toMatch(/its unit was killed first/)
      // Nothing of it lives: no longer listed.
      expect(actors(h, ['inspect', '--json'], {env}).json.damaged).toEqual([])
    },
    40_000,
  )
})

describe.each(CONTAINMENT_MODES)('a Run cannot hide by its run.json ($mode)', ({env, skip}) => {
  it.skipIf(skip)(
    'one that killed its supervisor and deleted its run.json is still listed, and `control RUN kill` ends it',
    async () => {
      const h = home()
      const tag = token()
      // The supervisor is the parent of the command's wrapper (the command's parent): killed, nothing rewrites run.json.
      const script =
        'kill -9 $(ps -o ppid= -p $PPID); sleep 0.3; rm -f "$ACTORS_STATE_DIR/run.json"; while :; do sleep 1; done'
      const dir = await launch(h, 'dmg', tag, script, env)
      await waitFor(() => !existsSync(join(dir, 'run.json')), 10_000, 'run.json deleted')
      for (const args of [
        ['inspect', '--json'],
        ['inspect', '--status', 'running', '--json'],
      ]) {
        const listed = actors(h, args, {env})
        const entry = listed.json.damaged.find((d: {state_dir: string}) => d.state_dir === dir)
        expect(entry, `${args.join(' ')}: ${listed.stdout}`).toBeDefined()
        expect(entry.error).toMatch(/run\.json is gone but Run dmg .* still runs: pids \d+/)
      }
      const one = actors(h, ['inspect', 'dmg'], {env})
      expect(one.code, one.stderr).toBe(1)
      expect(one.stderr).toContain(`${dir}: run.json is gone but Run dmg`)
      actors(h, ['control', 'dmg', 'kill'], {env})
      expect(survivors(tag)).toEqual([])
    },
    40_000,
  )
})

/** A process of the test's own (the "someone else" a forged record points at), marked by `tag`; resolves with its pid. */
function victim(tag: string, env: NodeJS.ProcessEnv = {}): number {
  const child = spawn('sh', ['-c', `: ${tag}; while :; do sleep 1; done`], {
    detached: true,
    stdio: 'ignore',
    env: {...process.env, ...env},
  })
  child.unref()
  return child.pid!
}

/** Rewrite run.json's containment atomically (temporary file + rename), as a Run can. */
function forgeContainment(dir: string, containment: unknown): void {
  const meta = readJson(join(dir, 'run.json'))
  writeFileSync(join(dir, 'run.json.forged'), JSON.stringify({...meta, containment}))
  renameSync(join(dir, 'run.json.forged'), join(dir, 'run.json'))
}

describe('only proven targets', () => {
  for (const {mode, env, skip} of CONTAINMENT_MODES) {
    it.skipIf(skip)(
      `${mode}: a run.json containment rewritten to another target is refused naming run.json; the Run still ends and the other target is untouched`,
      async () => {
        const h = home()
        const tag = token()
        const other = token()
        let cgroup: string | undefined
        let pid: number
        let forged: unknown
        if (mode === 'cgroup') {
          cgroup = join(discoverCgroupBases()!.unified, `actors-trust-victim-${process.pid}`)
          mkdirSync(cgroup)
          pid = victim(other)
          writeFileSync(join(cgroup, 'cgroup.procs'), String(pid))
          forged = {kind: 'cgroup', path: cgroup}
        } else {
          pid = victim(other, {TRUST_VICTIM: other})
          forged = {kind: 'tracked', marker: `TRUST_VICTIM=${other}`}
        }
        try {
          const dir = await launch(h, 'liar', tag, 'while :; do sleep 1; done', env)
          await waitFor(() => readJson(join(dir, 'run.json')).children_processes?.length, 10_000, 'command recorded')
          forgeContainment(dir, forged)
          const paused = actors(h, ['control', 'liar', 'pause'], {env})
          expect(paused.code, paused.stderr).toBe(1)
          expect(paused.stderr).toContain(`${join(dir, 'run.json')}: containment names`)
          expect(processState(pid)).not.toBe('T')

          const killed = actors(h, ['control', 'liar', 'kill'], {env})
          expect(killed.code, killed.stderr).toBe(1)
          expect(killed.stderr).toContain(`${join(dir, 'run.json')}: containment names`)
          expect(survivors(tag)).toEqual([])
          // The victim lives; a copy of its shell forked to exec `sleep` carries its tag for a moment, and is its child.
          expect(survivors(other).filter((found) => found !== pid && parentOf(found) !== pid)).toEqual([])
          expect(survivors(other)).toContain(pid)
          if (cgroup) expect(existsSync(cgroup)).toBe(true)
        } finally {
          try {
            process.kill(pid, 'SIGKILL')
          } catch {}
          if (cgroup) {
            // Whatever is left in it (a `sleep` the victim forked; frozen, if a pause reached it) goes with it.
            writeFileSync(join(cgroup, 'cgroup.kill'), '1')
            await waitFor(() => rmdirCgroup(cgroup!), 5000, 'victim cgroup removed')
          }
        }
      },
      40_000,
    )
  }
})

describe("a run.json naming a sibling's instance", () => {
  for (const {mode, env, skip} of CONTAINMENT_MODES) {
    it.skipIf(skip)(
      `${mode}: control kill ends the liar and leaves the sibling running (the unit is named after the state dir the kernel resolved)`,
      async () => {
        const h = home()
        const liarTag = token()
        const siblingTag = token()
        const siblingDir = await launch(h, 'sibling', siblingTag, 'while :; do sleep 1; done', env)
        const dir = await launch(h, 'liar', liarTag, 'while :; do sleep 1; done', env)
        await waitFor(() => readJson(join(dir, 'run.json')).children_processes?.length, 10_000, 'command recorded')
        const siblingInstance = readJson(join(siblingDir, 'run.json')).run_instance_id
        const meta = readJson(join(dir, 'run.json'))
        writeFileSync(join(dir, 'run.json.forged'), JSON.stringify({...meta, run_instance_id: siblingInstance}))
        renameSync(join(dir, 'run.json.forged'), join(dir, 'run.json'))

        const killed = actors(h, ['control', 'liar', 'kill'], {env})
        // The liar ends whatever it claims; the sibling's unit is never reached through the forged instance.
        await waitFor(() => survivors(liarTag).length === 0, 10_000, 'the liar ended')
        expect(survivors(siblingTag).length, killed.stderr).toBeGreaterThan(0)
        const sibling = actors(h, ['inspect', 'sibling', '--json'], {env})
        expect(sibling.json.status).toBe('running')
        expect(actors(h, ['control', 'sibling', 'kill'], {env}).code).toBe(0)
        expect(survivors(siblingTag)).toEqual([])
      },
      40_000,
    )
  }
})

describe('a run.json whose process records name another process group', () => {
  for (const {mode, env, skip} of CONTAINMENT_MODES) {
    it.skipIf(skip)(
      `${mode}: interrupt, pause and stop reach only the Run's own processes and the groups they lead`,
      async () => {
        const h = home()
        const liarTag = token()
        const otherTag = token()
        const otherDir = await launch(h, 'other', otherTag, 'while :; do sleep 1; done', env)
        const dir = await launch(h, 'liar', liarTag, 'trap "" INT; while :; do sleep 1; done', env)
        await waitFor(() => readJson(join(dir, 'run.json')).children_processes?.length, 10_000, 'command recorded')
        await waitFor(() => readJson(join(otherDir, 'run.json')).children_processes?.length, 10_000, 'other recorded')
        const otherGroup = readJson(join(otherDir, 'run.json')).children_processes[0].pgid
        const meta = readJson(join(dir, 'run.json'))
        const records = meta.children_processes.map((r: object) => ({...r, pgid: otherGroup}))
        writeFileSync(
          join(dir, 'run.json.forged'),
          JSON.stringify({...meta, pgid: otherGroup, children_processes: records}),
        )
        renameSync(join(dir, 'run.json.forged'), join(dir, 'run.json'))

        actors(h, ['control', 'liar', 'interrupt'], {env})
        // And a sibling's real process record, copied whole (pid, group, identity): verified, yet not the liar's.
        const copied = readJson(join(otherDir, 'run.json')).children_processes[0]
        const now = readJson(join(dir, 'run.json'))
        writeFileSync(
          join(dir, 'run.json.forged'),
          JSON.stringify({...now, children_processes: [...now.children_processes, copied]}),
        )
        renameSync(join(dir, 'run.json.forged'), join(dir, 'run.json'))
        actors(h, ['control', 'liar', 'pause'], {env})
        expect(processState(copied.pid)).not.toBe('T')
        actors(h, ['control', 'liar', 'stop'], {env})
        await waitFor(() => survivors(liarTag).length === 0, 20_000, 'the liar ended')
        expect(survivors(otherTag).length).toBeGreaterThan(0)
        expect(actors(h, ['inspect', 'other', '--json'], {env}).json.status).toBe('running')
        expect(actors(h, ['control', 'other', 'kill'], {env}).code).toBe(0)
      },
      40_000,
    )
  }
})

describe("a run.json whose only command record is a sibling's", () => {
  for (const {mode, env, skip} of CONTAINMENT_MODES) {
    it.skipIf(skip)(
      `${mode}: pause signals nothing and names run.json and the pid, not "retry in a moment"`,
      async () => {
        const h = home()
        const otherDir = await launch(h, 'other', token(), 'while :; do sleep 1; done', env)
        const dir = await launch(h, 'liar', token(), 'while :; do sleep 1; done', env)
        await waitFor(() => readJson(join(dir, 'run.json')).children_processes?.length, 10_000, 'command recorded')
        await waitFor(() => readJson(join(otherDir, 'run.json')).children_processes?.length, 10_000, 'other recorded')
        const copied = readJson(join(otherDir, 'run.json')).children_processes[0]
        const meta = readJson(join(dir, 'run.json'))
        writeFileSync(join(dir, 'run.json.forged'), JSON.stringify({...meta, children_processes: [copied]}))
        renameSync(join(dir, 'run.json.forged'), join(dir, 'run.json'))
        const pause = actors(h, ['control', 'liar', 'pause'], {env})
        expect(pause.code, pause.stderr).toBe(3)
        expect(pause.stderr).toContain(
          `${join(dir, 'run.json')} names pid ${copied.pid} as its command, which is no process of this Run`,
        )
        expect(pause.stderr).not.toContain('retry in a moment')
        expect(processState(copied.pid)).not.toBe('T')
        actors(h, ['control', 'liar', 'kill'], {env})
        actors(h, ['control', 'other', 'kill'], {env})
      },
      40_000,
    )
  }
})

describe("a run.json that names another Run's id", () => {
  it('is damage: the table keeps it under its own dir name, control kill ends it and says so, the other Run runs on', async () => {
    const h = home()
    const liarTag = token()
    const otherTag = token()
    await launch(h, 'other', otherTag, 'while :; do sleep 1; done', {})
    const dir = await launch(h, 'liar', liarTag, 'while :; do sleep 1; done', {})
    await waitFor(() => readJson(join(dir, 'run.json')).children_processes?.length, 10_000, 'command recorded')
    writeFileSync(join(dir, 'run.json.forged'), JSON.stringify({...readJson(join(dir, 'run.json')), run: 'other'}))
    renameSync(join(dir, 'run.json.forged'), join(dir, 'run.json'))

    const table = actors(h, ['inspect'])
    expect(table.stdout.match(/^other\s/gm)).toHaveLength(1)
    expect(table.stdout).toMatch(/^liar\s+-\s+damaged\s/m)
    expect(table.stderr).toContain('names the Run "other", not liar')
    const killed = actors(h, ['control', 'liar', 'kill'])
    expect(killed.code).toBe(1)
    expect(killed.stderr).toContain('could not kill liar the usual way')
    expect(killed.stdout).not.toContain('other')
    await waitFor(() => survivors(liarTag).length === 0, 10_000, 'the liar ended')
    expect(survivors(otherTag).length).toBeGreaterThan(0)
    expect(actors(h, ['control', 'other', 'kill']).code).toBe(0)
  }, 40_000)
})

describe('a local Run that names itself a Slurm job in its run.json', () => {
  it('still reads running, and control kill ends it here without asking Slurm', async () => {
    const h = home()
    const tag = token()
    const dir = await launch(h, 'posing', tag, 'while :; do sleep 1; done', {})
    await waitFor(() => readJson(join(dir, 'run.json')).children_processes?.length, 10_000, 'command recorded')
    const meta = readJson(join(dir, 'run.json'))
    // Slurm's commands, wherever asked, answer for a job 999 that is not this Run's (or hang, with no controller).
    writeFileSync(join(dir, 'run.json.forged'), JSON.stringify({...meta, executor: {kind: 'slurm', job_id: '999'}}))
    renameSync(join(dir, 'run.json.forged'), join(dir, 'run.json'))

    const slurmless = {PATH: `${join(h, 'no-slurm')}:${process.env.PATH}`}
    mkdirSync(join(h, 'no-slurm'))
    for (const tool of ['squeue', 'scontrol', 'scancel', 'sacct', 'srun']) {
      writeFileSync(
        join(h, 'no-slurm', tool),
        `#!/bin/sh\necho "${tool} was asked" >>"${join(h, 'asked')}"\nsleep 60\n`,
        {
          mode: 0o755,
        },
      )
    }
    const listed = actors(h, ['inspect', 'posing', '--json'], {env: slurmless, timeout: 15_000})
    expect(listed.code, listed.stderr).toBe(0)
    expect(listed.json.status).toBe('running')
    const killed = actors(h, ['control', 'posing', 'kill'], {env: slurmless, timeout: 15_000})
    expect(killed.code, killed.stderr).toBe(0)
    await waitFor(() => survivors(tag).length === 0, 10_000, 'the Run ended')
    expect(actors(h, ['inspect', 'posing', '--json'], {env: slurmless}).json.status).toBe('killed')
    expect(existsSync(join(h, 'asked'))).toBe(false)
  }, 40_000)
})

/** Remove the (emptied) victim cgroup; true once it is gone. */
function rmdirCgroup(dir: string): boolean {
  try {
    rmdirSync(dir)
  } catch {}
  return !existsSync(dir)
}

describe('a kill_grace_ms a Run wrote into its own run.json', () => {
  it('is waited at most an hour by a stop from outside (a forged 10^12 ms made stop never return)', () => {
    expect(recordedKillGraceMs({kill_grace_ms: 1e12})).toBe(3_600_000)
    expect(recordedKillGraceMs({kill_grace_ms: -5})).toBe(0)
    expect(recordedKillGraceMs({kill_grace_ms: 'x'})).toBe(5000)
    expect(recordedKillGraceMs({kill_grace_ms: 2500})).toBe(2500)
    expect(recordedKillGraceMs({})).toBe(5000)
  })
})

/** A child Run launched from inside `P` that, once running, deletes `parent` from its run.json (redteam pass 7 H-5). */
const ORPHANING_CHILD = [
  'node -e \'const fs=require("fs"),f=process.env.ACTORS_STATE_DIR+"/run.json",j=JSON.parse(fs.readFileSync(f));',
  'delete j.parent;j.root=j.run;j.depth=0;fs.writeFileSync(f+".t",JSON.stringify(j));fs.renameSync(f+".t",f)\'',
].join('')

describe("a tree's end reaches a child whatever its run.json says of its parent", () => {
  for (const {mode, env, skip} of CONTAINMENT_MODES) {
    for (const verb of ['kill', 'stop']) {
      it.skipIf(skip)(
        `${mode}: control P ${verb} ends a journaled child that deleted its parent field`,
        async () => {
          const h = home()
          const [ptag, ctag] = [token(), token()]
          const child = `${ORPHANING_CHILD}; : ${ctag}; while :; do sleep 1; done`
          const script = `actors run --name C -- sh -c '${child.replace(/'/g, `'\\''`)}' >/dev/null; while :; do sleep 1; done`
          const pdir = await launch(h, 'P', ptag, script, env)
          await waitFor(() => survivors(ctag).length > 0, 10_000, 'C running')
          const cdir = join(pdir, '..', 'C')
          await waitFor(() => readJson(join(cdir, 'run.json')).parent === undefined, 10_000, 'C dropped its parent')
          const r = actors(h, ['control', 'P', verb], {env, timeout: 60_000})
          expect(r.code, r.stderr).toBe(0)
          expect(survivors(ptag)).toEqual([])
          expect(survivors(ctag), r.stderr).toEqual([])
          const result = await waitFor(
            () => existsSync(join(cdir, 'result.json')) && readJson(join(cdir, 'result.json')),
          )
          expect(result.status).toBe(verb === 'kill' ? 'killed' : 'cancelled')
        },
        60_000,
      )
    }

    it.skipIf(skip)(
      `${mode}: control P kill ends a child that deleted its parent field and emptied P's children journal`,
      async () => {
        const h = home()
        const [ptag, ctag] = [token(), token()]
        const child = `${ORPHANING_CHILD}; : > "$(dirname "$ACTORS_STATE_DIR")/P/children.jsonl"; : ${ctag}; while :; do sleep 1; done`
        const script = `actors run --name C -- sh -c '${child.replace(/'/g, `'\\''`)}' >/dev/null; while :; do sleep 1; done`
        const pdir = await launch(h, 'P', ptag, script, env)
        await waitFor(() => survivors(ctag).length > 0, 10_000, 'C running')
        const cdir = join(pdir, '..', 'C')
        await waitFor(
          () =>
            readJson(join(cdir, 'run.json')).parent === undefined &&
            readFileSync(join(pdir, 'children.jsonl')).length === 0,
          10_000,
          "C dropped its parent and emptied P's journal",
        )
        const r = actors(h, ['control', 'P', 'kill'], {env, timeout: 60_000})
        expect(r.code, r.stderr).toBe(0)
        expect(survivors(ptag)).toEqual([])
        expect(survivors(ctag), r.stderr).toEqual([])
        const result = await waitFor(() => existsSync(join(cdir, 'result.json')) && readJson(join(cdir, 'result.json')))
        expect(result.status).toBe('killed')
      },
      60_000,
    )

    it.skipIf(skip)(
      `${mode}: a forged children.jsonl line does not make a kill of P reach an unrelated Run`,
      async () => {
        const h = home()
        const [ptag, utag] = [token(), token()]
        const pdir = await launch(h, 'P', ptag, 'while :; do sleep 1; done', env)
        const udir = await launch(h, 'U', utag, 'while :; do sleep 1; done', env)
        const u = readJson(join(udir, 'run.json'))
        // The neighbour's forgery: U named as P's child with U's real instance, U's own record untouched.
        const line = {
          run: 'U',
          run_instance_id: u.run_instance_id,
          state_dir: udir,
          created_at: u.created_at,
          queued: false,
        }
        writeFileSync(join(pdir, 'children.jsonl'), `${JSON.stringify(line)}\n`, {flag: 'a'})
        const r = actors(h, ['control', 'P', 'kill'], {env})
        expect(r.code, r.stderr).toBe(0)
        expect(survivors(ptag)).toEqual([])
        expect(survivors(utag).length).toBeGreaterThan(0)
        expect(readJson(join(udir, 'run.json')).status).toBe('running')
        actors(h, ['control', 'U', 'kill'], {env})
        expect(survivors(utag)).toEqual([])
      },
      40_000,
    )
  }
})
