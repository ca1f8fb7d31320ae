/**
 * `prune` and `close` believe the processes, not run.json (issue 35, H-1 and
 * H-4). run.json is a Run's to write, and a neighbour's too: a live Run
 * marked `done` (with an old `ended_at`) by another Run is kept by `prune
 * --older-than 1h` (its dir, its cgroup, its processes) and named as skipped;
 * `close` of a live Run marked `done` (by itself or a neighbour) ends it
 * first, as for any live Run. Real Runs under the cgroup a Run gets on this
 * machine and again under tracked containment; their processes are found by a
 * unique token in their command line, never by name.
 */
import {readdirSync, readFileSync} from 'node:fs'
import {join} from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'
import {actors, homesPerTest, readJson, survivors, waitFor, CONTAINMENT_MODES} from './helpers.js'

const home = homesPerTest('actors-trust-prune-')

/** Tokens of this file's Runs: whatever of them is left after a test is killed. */
const tokens: string[] = []
afterEach(() => {
  for (const tag of tokens.splice(0)) for (const pid of survivors(tag)) process.kill(pid, 'SIGKILL')
})

function token(): string {
  const tag = `trustprune${process.pid}x${Math.floor(Math.random() * 1e9)}`
  tokens.push(tag)
  return tag
}

/** A node script that marks the run.json at argv[1] done, ended in 2020 (the red-team's neighbour). */
const MARK_DONE =
  'const fs=require("fs"),f=process.argv[1],j=JSON.parse(fs.readFileSync(f));' +
  'j.status="done";j.ended_at="2020-01-01T00:00:00Z";j.exit_code=0;fs.writeFileSync(f,JSON.stringify(j))'

/** Launch a long sleeper `name` (its command line carries `tag`); resolves with its state dir once it runs. */
async function launchSleeper(h: string, name: string, tag: string, env: NodeJS.ProcessEnv): Promise<string> {
  const r = actors(h, ['run', '--name', name, '--json', '--', 'sh', '-c', `sleep 60; exit 3 # ${tag}`], {env})
  expect(r.code, r.stderr).toBe(0)
  await waitFor(() => survivors(tag).length > 0, 10_000, `${name} running`)
  return r.json.state_dir
}

/** A neighbour Run marks Run `victim`'s run.json done; resolves once it reads done. */
async function neighbourMarksDone(h: string, victim: string, dir: string, env: NodeJS.ProcessEnv): Promise<void> {
  const script = `node -e '${MARK_DONE}' "$(dirname "$ACTORS_STATE_DIR")/${victim}/run.json"`
  const r = actors(h, ['run', '--name', 'neighbour', '--wait', '--json', '--', 'sh', '-c', script], {env})
  expect(r.code, r.stderr).toBe(0)
  await waitFor(() => readJson(join(dir, 'run.json')).status === 'done', 10_000, `${victim} marked done`)
}

describe.each(CONTAINMENT_MODES)('a live Run marked done by a neighbour ($mode)', ({env, skip}) => {
  it.skipIf(skip)(
    'survives prune --older-than 1h: dir kept, processes alive, still listed, named as skipped',
    async () => {
      const h = home()
      const tag = token()
      const dir = await launchSleeper(h, 'live1', tag, env)
      await neighbourMarksDone(h, 'live1', dir, env)
      const before = survivors(tag)
      const cgroup = readJson(join(dir, 'run.json')).containment?.path
      const r = actors(h, ['prune', '--older-than', '1h', '--json'], {env})
      expect(r.code, r.stderr).toBe(5)
      expect(r.json.pruned).not.toContain('live1')
      expect(r.json.skipped).toContainEqual(expect.objectContaining({run: 'live1', problem: 'live'}))
      expect(r.json.skipped.find((s: any) => s.run === 'live1').reason).toMatch(/still run.*actors control live1 kill/)
      expect(r.json.removed_cgroups ?? []).toEqual([])
      expect(readdirSync(join(h, 'runs'))).toContain('live1')
      expect(survivors(tag)).toEqual(before)
      if (typeof cgroup === 'string') expect(readdirSync(join(cgroup, '..'))).toContain(cgroup.split('/').at(-1))
      const listed = actors(h, ['inspect', '--json'], {env})
      expect(JSON.stringify(listed.json)).toContain('live1')
      // Ended for real, it goes like any finished Run.
      expect(actors(h, ['control', 'live1', 'kill'], {env}).code).toBe(0)
      await waitFor(() => survivors(tag).length === 0, 10_000, 'live1 gone')
    },
    40_000,
  )

  it.skipIf(skip)(
    'is stopped by close first: its processes gone, recorded ended by the kernel, closed',
    async () => {
      const h = home()
      const tag = token()
      const dir = await launchSleeper(h, 'c1', tag, env)
      await neighbourMarksDone(h, 'c1', dir, env)
      const r = actors(h, ['close', 'c1', '--json'], {env, timeout: 30_000})
      expect(r.code, r.stderr).toBe(0)
      expect(survivors(tag)).toEqual([])
      expect(r.json.closed).toBe(true)
      expect(r.json.stopped).toBe(true)
      const meta = await waitFor(() => {
        const m = readJson(join(dir, 'run.json'))
        return m.status !== 'done' && m
      })
      // A stop of a Run whose end is forged kills its processes (as `control stop` does: end-run.ts endForgedEnd).
      expect(meta.status).toBe('killed')
      expect(meta.closed).toBe(true)
    },
    40_000,
  )
})

/** What a Run writes into its own run.json: an end, or an end and `closed` (which close took as already done). */
const SELF_MARKS = [
  {what: 'done', extra: ''},
  {what: 'done and closed', extra: 'j.closed=true;j.closed_at=j.ended_at;'},
]

describe.each(CONTAINMENT_MODES)('a live Run that marks itself done ($mode)', ({env, skip}) => {
  for (const {what, extra} of SELF_MARKS) {
    it.skipIf(skip)(
      `is stopped by close first when it wrote ${what} (the red-team repro H-4)`,
      async () => {
        const h = home()
        const tag = token()
        const mark = MARK_DONE.replace(
          'j.ended_at="2020-01-01T00:00:00Z";',
          `j.ended_at=new Date().toISOString();${extra}`,
        )
        const script = `node -e '${mark}' "$ACTORS_STATE_DIR/run.json"; sleep 60 # ${tag}`
        const launched = actors(h, ['run', '--name', 'c1', '--json', '--', 'sh', '-c', script], {env})
        expect(launched.code, launched.stderr).toBe(0)
        const dir = launched.json.state_dir
        await waitFor(() => readJson(join(dir, 'run.json')).status === 'done' && survivors(tag).length > 0)
        const r = actors(h, ['close', 'c1'], {env, timeout: 30_000})
        expect(r.code, r.stderr).toBe(0)
        expect(r.stdout + r.stderr).toMatch(/stopped \(killed\) and closed/)
        expect(survivors(tag)).toEqual([])
        expect(readJson(join(dir, 'run.json')).closed).toBe(true)
      },
      40_000,
    )
  }
})

/** The one-letter state of a process (R, S, T...), from /proc/PID/stat; undefined once it is gone. */
function procState(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3)
  } catch {
    return undefined
  }
}

describe.each(CONTAINMENT_MODES)('pause of a live Run that marked itself done ($mode)', ({env, skip}) => {
  it.skipIf(skip)(
    'freezes its processes (not its supervisor) and resume thaws them; the record stays, stop still ends it',
    async () => {
      const h = home()
      const tag = token()
      const mark = MARK_DONE.replace('j.ended_at="2020-01-01T00:00:00Z";', 'j.ended_at=new Date().toISOString();')
      const script = `node -e '${mark}' "$ACTORS_STATE_DIR/run.json"; sleep 60; exit 3 # ${tag}`
      const launched = actors(h, ['run', '--name', 'p1', '--json', '--', 'sh', '-c', script], {env})
      expect(launched.code, launched.stderr).toBe(0)
      const dir = launched.json.state_dir
      await waitFor(() => readJson(join(dir, 'run.json')).status === 'done' && survivors(tag).length > 0)
      const [command] = survivors(tag)
      const supervisor = readJson(join(dir, 'run.json')).process_identity.pid
      const paused = actors(h, ['control', 'p1', 'pause', '--json'], {env})
      expect(paused.code, paused.stderr).toBe(0)
      expect(paused.json).toMatchObject({action: 'pause', run: 'p1', status: 'done', handled_by: 'kernel'})
      expect(paused.json.signalled).toContain(command)
      expect(paused.json.signalled).not.toContain(supervisor)
      expect(procState(command)).toBe('T')
      expect(procState(supervisor)).not.toBe('T')
      const resumed = actors(h, ['control', 'p1', 'resume', '--json'], {env})
      expect(resumed.code, resumed.stderr).toBe(0)
      expect(resumed.json.signalled).toContain(command)
      await waitFor(() => procState(command) !== 'T', 5000, 'the command thawed')
      expect(readJson(join(dir, 'run.json')).status).toBe('done')
      expect(actors(h, ['control', 'p1', 'stop'], {env, timeout: 30_000}).code).toBe(0)
      await waitFor(() => survivors(tag).length === 0, 10_000, 'p1 gone')
      // Nothing of it runs now: pause is refused as for any finished Run.
      const again = actors(h, ['control', 'p1', 'pause'], {env})
      expect(again.code).toBe(3)
      expect(again.stderr).toMatch(/cannot pause it/)
    },
    40_000,
  )
})
