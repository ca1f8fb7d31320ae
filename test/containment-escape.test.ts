/**
 * Processes that leave their Run's unit (SPEC: Containment, `leftover`;
 * docs/containment.md): a root Run that writes itself into the root cgroup is
 * found by its ACTORS_RUN_INSTANCE marker, killed and named; under tracking, a
 * process seen as a member once stays one after it cuts every tie, and one
 * that left unseen (setsid, a cleared environment, a double fork) is named as
 * unknown rather than the Run claiming an empty unit. Real processes, found
 * by a sleep of an odd length no other test uses.
 */
import {spawn, spawnSync} from 'node:child_process'
import {existsSync, readFileSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {setTimeout as sleep} from 'node:timers/promises'
import {afterEach, describe, expect, it} from 'vitest'
import {discoverCgroupBases} from '../src/lib/kernel/containment/cgroup-fs.js'
import {BIN, actors, cgroup2Root, cliEnv, homesPerTest, waitFor, waitForResult, CONTAINMENT_MODES} from './helpers.js'

const CGROUPS = discoverCgroupBases() !== null
const ROOT_USER = process.getuid?.() === 0
const home = homesPerTest('actors-escape-')
const started: string[] = []
afterEach(() => {
  for (const text of started.splice(0)) for (const pid of survivors(text)) kill(pid)
})

const CGROUP2_ROOT = cgroup2Root()

/** A sleep length nobody else uses: its command line is this test's marker (cleaned up after each test). */
function marker(): string {
  const text = `${300 + Math.floor(Math.random() * 90)}.${process.pid}${Math.floor(Math.random() * 1e6)}`
  started.push(text)
  return text
}

/** Live processes whose whole command line is `sleep TEXT` (pgrep reads /proc; a zombie's command line is empty). */
function survivors(text: string): number[] {
  const out = spawnSync('pgrep', ['-f', `^sleep ${text.replaceAll('.', '[.]')}$`], {encoding: 'utf8'}).stdout
  return out.split('\n').filter(Boolean).map(Number)
}

const readResult = (dir: string) => JSON.parse(readFileSync(join(dir, 'result.json'), 'utf8'))

/** Read Run `run` (state dir `dir`) until a reader settles its lost supervisor: its result.json. */
function lostEnd(h: string, run: string, dir: string, env: NodeJS.ProcessEnv): Promise<any> {
  return waitFor(
    () => {
      actors(h, ['inspect', run, '--json'], {env})
      return existsSync(join(dir, 'result.json')) ? readResult(dir) : undefined
    },
    20_000,
    'the lost end',
  )
}

function kill(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL')
  } catch {}
}

const ENDINGS = ['timeout', 'stop', 'kill', 'normal end'] as const
const STATUS = {timeout: 'failed', stop: 'cancelled', kill: 'killed', 'normal end': 'done'} as const

// Naming another Run id in ACTORS_RUN does not slip past the marker: only a Run that holds the instance is another's.
const NAMED: Array<{ending: (typeof ENDINGS)[number]; naming: string}> = [
  ...ENDINGS.map((ending) => ({ending, naming: ''})),
  {ending: 'normal end', naming: 'ACTORS_RUN=nosuch '},
]

describe.skipIf(!CGROUPS || !ROOT_USER || !CGROUP2_ROOT)('a root Run that moves itself into the root cgroup', () => {
  for (const {ending, naming} of NAMED) {
    it(`${ending}${naming ? `, ${naming.trim()}` : ''}: found by its marker, killed and named in leftover`, async () => {
      const d = marker()
      const h = home()
      const rest = ending === 'normal end' ? 'exit 0' : 'wait'
      const script = `echo $$ > ${CGROUP2_ROOT}/cgroup.procs || exit 99; ${naming}sleep ${d} & ${rest}`
      const timeout = ending === 'timeout' ? ['--timeout', '4s'] : []
      const r = actors(h, ['run', '--json', '--cwd', h, ...timeout, '--', 'sh', '-c', script], {
        env: {ACTORS_CONTAINMENT: 'cgroup'},
      })
      expect(r.code).toBe(0)
      // A normal end may sweep it before this test sees it: then only the result can tell.
      if (ending !== 'normal end') await waitFor(() => survivors(d).length === 1, 20_000, 'the escaped sleep')
      if (ending === 'stop' || ending === 'kill')
        expect(actors(h, ['control', r.json.run, ending, '--json']).code).toBe(0)
      const result = await waitForResult(r.json.state_dir, 20_000)
      expect(survivors(d)).toEqual([])
      expect(result.status).toBe(STATUS[ending])
      // A normal end can find the child between sh's fork and its exec of sleep: named then by sh's command line.
      expect(result.leftover).toEqual(
        expect.arrayContaining([
          {
            pid: expect.any(Number),
            command: expect.stringMatching(new RegExp(`sleep ${d.replace('.', '\\.')}( & exit 0)?$`)),
            outside: 'marker',
            ended: true,
          },
        ]),
      )
    }, 60_000)
  }
})

describe.skipIf(!CGROUPS || !ROOT_USER || !CGROUP2_ROOT)("a paused root Run's helper in the root cgroup", () => {
  it("cannot thaw the Run's cgroup: it is stopped with the Run, continued on resume and killed with it", async () => {
    const d = marker()
    const h = home()
    const count = join(h, 'count')
    // The helper leaves for the root cgroup (its marker kept; `sleep d` tells it is there) and writes 0 to the Run's
    // cgroup.freeze every 50 ms.
    writeFileSync(
      join(h, 'thaw.sh'),
      `echo $$ > ${CGROUP2_ROOT}/cgroup.procs || exit 99\nsleep ${d} &\nwhile :; do echo 0 > "$1/cgroup.freeze"; sleep 0.05; done\n`,
    )
    const cgroupOf = `node -p "require(process.env.ACTORS_STATE_DIR+'/run.json').containment.path"`
    const script = `sh ${join(h, 'thaw.sh')} "$(${cgroupOf})" & i=0; while :; do i=$((i+1)); echo $i > ${count}; sleep 0.1; done`
    const r = actors(h, ['run', '--json', '--cwd', h, '--', 'sh', '-c', script], {env: {ACTORS_CONTAINMENT: 'cgroup'}})
    expect(r.code, r.stderr).toBe(0)
    const counted = () => Number(readFileSync(count, 'utf8') || 0)
    try {
      await waitFor(
        () => survivors(d).length > 0 && existsSync(count) && counted() > 2,
        20_000,
        'the helper and counter',
      )
      expect(actors(h, ['control', r.json.run, 'pause']).code).toBe(0)
      await sleep(300)
      const paused = counted()
      await sleep(1500)
      expect(counted()).toBe(paused)
      expect(actors(h, ['control', r.json.run, 'resume']).code).toBe(0)
      await waitFor(() => counted() > paused + 2, 10_000, 'the counter to go on')
      expect(actors(h, ['control', r.json.run, 'kill']).code).toBe(0)
      const result = await waitForResult(r.json.state_dir, 20_000)
      expect(result.status).toBe('killed')
      expect(survivors(d)).toEqual([])
    } finally {
      actors(h, ['control', r.json.run, 'kill'])
    }
  }, 60_000)
})

describe.each(CONTAINMENT_MODES)('escapes under $mode containment', ({mode, env, skip}) => {
  it.skipIf(skip)(
    'setsid env -i with a double fork: never a silent empty unit (tracked: named unknown; cgroup: ended)',
    async () => {
      const d = marker()
      const h = home()
      const script = `setsid env -i sh -c "(sleep ${d} &)"; sleep 100`
      const r = actors(h, ['run', '--json', '--cwd', h, '--timeout', '4s', '--', 'sh', '-c', script], {env})
      await waitFor(() => survivors(d).length === 1, 20_000, 'the escaped sleep')
      const pid = survivors(d)[0]
      const result = await waitForResult(r.json.state_dir, 20_000)
      expect(result).toMatchObject({status: 'failed', reason: 'timeout'})
      if (mode === 'cgroup') {
        expect(survivors(d)).toEqual([])
        expect(result.leftover).toBeUndefined()
      } else {
        // Nothing proves it is the Run's: named, never signalled.
        expect(survivors(d)).toEqual([pid])
        expect(result.leftover).toEqual(
          expect.arrayContaining([
            {pid, command: `sleep ${d}`, unknown: true, reason: expect.stringContaining('may have left the unit')},
          ]),
        )
      }
    },
    60_000,
  )

  it.skipIf(skip)(
    'the same escape through lock exec inside the Run',
    async () => {
      const d = marker()
      const h = home()
      const script = `actors lock exec escape-lock -- sh -c 'setsid env -i sh -c "(sleep ${d} &)"; sleep 100'`
      const r = actors(h, ['run', '--json', '--cwd', h, '--timeout', '8s', '--', 'sh', '-c', script], {env})
      await waitFor(() => survivors(d).length === 1, 20_000, 'the escaped sleep')
      const pid = survivors(d)[0]
      const result = await waitForResult(r.json.state_dir, 20_000)
      expect(result).toMatchObject({status: 'failed', reason: 'timeout'})
      if (mode === 'cgroup') expect(survivors(d)).toEqual([])
      else expect(result.leftover).toEqual(expect.arrayContaining([expect.objectContaining({pid, unknown: true})]))
    },
    60_000,
  )

  it.skipIf(skip)(
    'a Run that kills its supervisor and step wrapper, then clears its environment: its lost end names it or ends it',
    async () => {
      const d = marker()
      const h = home()
      // Same pid, group, session and cwd as the command; no marker, no supervisor, no wrapper, re-parented to init.
      const script = `sleep 0.5; W=$PPID; S=$(ps -o ppid= $W); kill -9 $S $W; exec env -i sleep ${d}`
      const r = actors(h, ['run', '--json', '--cwd', h, '--', 'sh', '-c', script], {env})
      await waitFor(() => survivors(d).length === 1, 20_000, 'the sleep, its supervisor gone')
      const pid = survivors(d)[0]
      // A reader finds the supervisor gone and settles the Run.
      const result = await lostEnd(h, r.json.run, r.json.state_dir, env)
      expect(result).toMatchObject({status: 'exited', reason: 'supervisor_lost'})
      if (mode === 'cgroup') {
        await waitFor(() => survivors(d).length === 0, 10_000, 'the sleep ended with its cgroup')
        expect(result.leftover).toBeUndefined()
      } else {
        // Nothing proves it is the Run's (its group leader is gone): named, never signalled.
        expect(survivors(d)).toEqual([pid])
        expect(result.leftover).toEqual(
          expect.arrayContaining([
            {pid, command: `sleep ${d}`, unknown: true, reason: expect.stringContaining('may have left the unit')},
          ]),
        )
      }
    },
    60_000,
  )

  it.skipIf(skip)(
    "an orphan the rest of the machine makes meanwhile, outside the Run's directory, is not named",
    async () => {
      const d = marker()
      const h = home()
      const r = actors(h, ['run', '--json', '--cwd', h, '--', 'sleep', '2'], {env})
      // Not the Run's: started by this test, elsewhere, orphaned at once, no marker.
      spawnSync('setsid', ['env', '-i', 'sh', '-c', `(sleep ${d} &)`], {cwd: '/', stdio: 'ignore'})
      await waitFor(() => survivors(d).length === 1, 20_000, 'the foreign sleep')
      const result = await waitForResult(r.json.state_dir, 20_000)
      expect(result.status).toBe('done')
      expect(result.leftover).toBeUndefined()
    },
    60_000,
  )

  it.skipIf(skip)(
    'a member seen while sampling stays one after it leaves group, session and environment and is orphaned',
    async () => {
      const d = marker()
      const h = home()
      // env -i sh holds `sleep d` as its child for 3 s (sampled meanwhile), then exits: sleep d is orphaned, no ties left.
      const script = `setsid env -i sh -c "sleep ${d} & sleep 3" & sleep 100`
      const r = actors(h, ['run', '--json', '--cwd', h, '--timeout', '6s', '--', 'sh', '-c', script], {env})
      await waitFor(() => survivors(d).length === 1, 20_000, 'the sleep')
      const result = await waitForResult(r.json.state_dir, 20_000)
      expect(result).toMatchObject({status: 'failed', reason: 'timeout'})
      expect(survivors(d)).toEqual([])
      expect(result.leftover).toBeUndefined()
    },
    60_000,
  )
})

describe('a lost Run under tracked containment', () => {
  const TRACKED = {ACTORS_CONTAINMENT: 'tracked'}
  it('a Run that kills its supervisor and step wrapper under a subreaper that is not init: named by its group leader gone', async () => {
    const d = marker()
    const h = home()
    // The launch runs under a child subreaper (PR_SET_CHILD_SUBREAPER, kept across exec) that outlives it: the
    // supervisor and then the command are handed to it, not to init, and the reader is not its child.
    const script = `sleep 0.5; W=$PPID; S=$(ps -o ppid= $W); kill -9 $S $W; exec env -i sleep ${d}`
    const subreaper = `import ctypes,os,sys; ctypes.CDLL(None).prctl(36,1,0,0,0); os.execvp(sys.argv[1], sys.argv[1:])`
    const launch = `'${process.execPath}' '${BIN}' run --name lost --cwd '${h}' -- sh -c '${script}' >/dev/null; sleep 30`
    const reaper = spawn('python3', ['-c', subreaper, 'sh', '-c', launch], {env: cliEnv(h, TRACKED), stdio: 'ignore'})
    try {
      await waitFor(() => survivors(d).length === 1, 20_000, 'the sleep, its supervisor gone')
      const pid = survivors(d)[0]
      expect(readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')[1]).toBe(String(reaper.pid))
      const dir = join(h, 'runs', 'lost')
      const result = await lostEnd(h, 'lost', dir, TRACKED)
      expect(result).toMatchObject({status: 'exited', reason: 'supervisor_lost'})
      expect(result.leftover).toEqual(expect.arrayContaining([expect.objectContaining({pid, unknown: true})]))
    } finally {
      reaper.kill('SIGKILL')
    }
  }, 60_000)

  // Each leaves the orphan look behind (another directory, a run.json that says so, none at all, a state dir born
  // after the command): still in its dead wrapper's group and session, it is named by them (red-team 11 N-H3).
  const HIDING = {
    'changes its directory': 'cd /',
    'rewrites run.json cwd': `node -e 'const f=process.env.ACTORS_STATE_DIR+"/run.json",j=require(f);j.cwd="/";require("fs").writeFileSync(f,JSON.stringify(j))'`,
    'deletes run.json cwd': `node -e 'const f=process.env.ACTORS_STATE_DIR+"/run.json",j=require(f);delete j.cwd;require("fs").writeFileSync(f,JSON.stringify(j))'`,
    'remakes its state dir': 'D=$ACTORS_STATE_DIR; mv $D $D.old && cp -a $D.old $D && rm -rf $D.old',
  }
  for (const [how, hide] of Object.entries(HIDING)) {
    it(`a Run that kills its supervisor and step wrapper and ${how}: still named`, async () => {
      const d = marker()
      const h = home()
      const script = `sleep 0.5; W=$PPID; S=$(ps -o ppid= $W); kill -9 $S $W; ${hide}; exec env -i sleep ${d}`
      const r = actors(h, ['run', '--json', '--cwd', h, '--', 'sh', '-c', script], {env: TRACKED})
      await waitFor(() => survivors(d).length === 1, 20_000, 'the sleep, its supervisor gone')
      const pid = survivors(d)[0]
      const result = await lostEnd(h, r.json.run, r.json.state_dir, TRACKED)
      expect(result).toMatchObject({status: 'exited', reason: 'supervisor_lost'})
      expect(survivors(d)).toEqual([pid])
      expect(result.leftover).toEqual(
        expect.arrayContaining([
          expect.objectContaining({
            pid,
            command: `sleep ${d}`,
            unknown: true,
          }),
        ]),
      )
    }, 60_000)
  }
})

describe('a normal end under tracked containment', () => {
  it("a Run that rewrites run.json cwd, then leaves a setsid helper in its directory: its timeout's end still names it", async () => {
    const d = marker()
    const h = home()
    const rewrite = `node -e 'const f=process.env.ACTORS_STATE_DIR+"/run.json",j=require(f);j.cwd="/";require("fs").writeFileSync(f,JSON.stringify(j))'`
    const script = `${rewrite}; setsid env -i sh -c "(sleep ${d} &)"; sleep 100`
    const env = {ACTORS_CONTAINMENT: 'tracked'}
    const r = actors(h, ['run', '--json', '--cwd', h, '--timeout', '4s', '--', 'sh', '-c', script], {env})
    await waitFor(() => survivors(d).length === 1, 20_000, 'the escaped sleep')
    const pid = survivors(d)[0]
    const result = await waitForResult(r.json.state_dir, 20_000)
    expect(result).toMatchObject({status: 'failed', reason: 'timeout'})
    expect(survivors(d)).toEqual([pid])
    expect(result.leftover).toEqual(expect.arrayContaining([expect.objectContaining({pid, unknown: true})]))
  }, 60_000)
})
