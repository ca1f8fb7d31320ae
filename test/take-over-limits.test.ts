/**
 * A Run cannot escape its timeout through the take-over path (SPEC:
 * Supervision; red-team 8 H-1, L-1): with its supervisor SIGKILLed, it
 * deletes its run.json `timeout_ms`, writes another `host` there, or kills
 * every adopter; and a read from inside the Run with a cleared environment
 * starts no adopter inside its own unit. Real Runs, cgroup and tracked.
 */
import {spawnSync} from 'node:child_process'
import {existsSync, mkdirSync, readFileSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {takeOverLocalRun} from '../src/lib/kernel/executors/take-over.js'
import {actors, homesPerTest, processAlive, readJson, waitFor, waitForResult} from './helpers.js'

const newHome = homesPerTest('actors-takeover-')

/** A script in the state root that edits the run.json it is given with the JS body `edit` (j is the document). */
function editor(home: string): string {
  const file = join(home, 'edit.cjs')
  writeFileSync(
    file,
    `const fs=require("fs"),f=process.argv[2],j=JSON.parse(fs.readFileSync(f));new Function("j",process.argv[3])(j);` +
      `fs.writeFileSync(f+".t",JSON.stringify(j));fs.renameSync(f+".t",f)\n`,
  )
  return file
}

/** SIGKILL the supervisor: the parent of the command's wrapper (the command's parent). */
const KILL_SUPERVISOR = 'kill -9 $(cut -d" " -f4 /proc/$PPID/stat)'

function launch(home: string, args: string[], env: NodeJS.ProcessEnv): {run: string; state_dir: string} {
  const r = actors(home, ['run', '--json', ...args], {env})
  expect(r.code, r.stderr).toBe(0)
  return r.json
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Read every Run as any command does (the read that takes a lost one over). */
function read(home: string): void {
  const r = actors(home, ['inspect', '--json'])
  expect(r.code, r.stderr).toBe(0)
}

for (const containment of ['cgroup', 'tracked'] as const) {
  const env = containment === 'tracked' ? {ACTORS_CONTAINMENT: 'tracked'} : {}
  describe(`a Run taken over keeps its timeout (${containment})`, () => {
    it('deleting timeout_ms from run.json: the wrapper proves the deadline, failed timeout', async () => {
      const home = newHome()
      const edit = editor(home)
      const script = `node ${edit} $ACTORS_STATE_DIR/run.json "delete j.timeout_ms"; ${KILL_SUPERVISOR}; exec sleep 30`
      const r = launch(home, ['--timeout', '2s', '--', 'sh', '-c', script], env)
      await waitFor(() => readJson(join(r.state_dir, 'run.json')).timeout_ms === undefined, 10_000, 'the rewrite')
      await sleep(300)
      read(home)
      const result = await waitForResult(r.state_dir, 8000)
      expect(result).toMatchObject({status: 'failed', reason: 'timeout'})
      expect(result.duration_ms).toBeLessThan(5000)
    })

    it('another host written in run.json: its unit is seen here, and the timeout ends it', async () => {
      const home = newHome()
      const edit = editor(home)
      const script = `node ${edit} $ACTORS_STATE_DIR/run.json 'j.host="elsewhere"'; ${KILL_SUPERVISOR}; exec sleep 30`
      const r = launch(home, ['--timeout', '2s', '--', 'sh', '-c', script], env)
      await waitFor(() => readJson(join(r.state_dir, 'run.json')).host === 'elsewhere', 10_000, 'the rewrite')
      await sleep(300)
      read(home)
      const result = await waitForResult(r.state_dir, 8000)
      expect(result).toMatchObject({status: 'failed', reason: 'timeout'})
    })

    it('killing every adopter: a read past the deadline ends the unit as a timeout', async () => {
      const home = newHome()
      const mark = join(home, 'looping')
      const loop = `while :; do for p in $(pgrep -f "supervisor.cjs $ACTORS_STATE_DIR "); do kill -9 $p; done; sleep 0.05; done`
      // The looping shell writes its own pid: its supervisor may be dead before it recorded the command's processes.
      const script = `${KILL_SUPERVISOR}; echo $$ > ${mark}.t && mv ${mark}.t ${mark}; ${loop}`
      const r = launch(home, ['--timeout', '2s', '--', 'sh', '-c', script], env)
      await waitFor(() => existsSync(mark), 10_000, 'the loop')
      const looping = [Number(readFileSync(mark, 'utf8'))]
      expect(processAlive(looping[0])).toBe(true)
      read(home) // an adopter, killed at once
      await sleep(2500)
      read(home)
      const result = await waitForResult(r.state_dir, 5000)
      expect(result).toMatchObject({status: 'failed', reason: 'timeout'})
      for (const pid of looping) expect(processAlive(pid)).toBe(false)
    })

    it('an adopter dead before its identity is read is not recorded: the next read takes the Run over again', async () => {
      const home = newHome()
      // Killed once the supervisor has recorded the command (killed before, it never had) and the launcher has
      // returned (a launcher that read the Run after the kill took it over itself).
      const gate = join(home, 'launched')
      const after = `until grep -q child_pid "$ACTORS_STATE_DIR/run.json" && [ -e ${gate} ]; do sleep 0.01; done`
      const r = launch(home, ['--', 'sh', '-c', `${after}; ${KILL_SUPERVISOR}; exec sleep 30`], env)
      writeFileSync(gate, '')
      const lost = await waitFor(
        () => {
          const meta = readJson(join(r.state_dir, 'run.json'))
          return meta.child_pid && !processAlive(meta.pid) && meta
        },
        10_000,
        'the supervisor killed',
      )
      // A real process, gone by the time its identity would be read: as an adopter the Run killed at once.
      const gone = spawnSync('true').pid
      const taken = takeOverLocalRun(
        lost,
        r.state_dir,
        () => ({pid: gone, identity: undefined}),
        () => {
          throw new Error('a started Run is never started afresh')
        },
      )
      expect(taken).toEqual({adopted: lost})
      expect(readJson(join(r.state_dir, 'run.json'))).toMatchObject({
        pid: lost.pid,
        process_identity: lost.process_identity,
      })
      // Recorded without an identity, the dead adopter would count as starting for 30 s; the next read adopts now.
      read(home)
      const adopted = readJson(join(r.state_dir, 'run.json'))
      expect(adopted.pid).not.toBe(lost.pid)
      expect(processAlive(adopted.pid)).toBe(true)
      expect(actors(home, ['control', r.run, 'kill']).code).toBe(0)
      expect(await waitForResult(r.state_dir, 10_000)).toMatchObject({status: 'killed'})
    })

    it('a read from inside with a cleared environment starts no adopter there; one from outside does', async () => {
      const home = newHome()
      const mark = join(home, 'read')
      const inside = `env -i PATH="$PATH" ACTORS_HOME="$ACTORS_HOME" actors inspect --json >/dev/null`
      const script = `${KILL_SUPERVISOR}; sleep 0.3; ${inside}; touch ${mark}; sleep 1; exit 3`
      const r = launch(home, ['--', 'sh', '-c', script], env)
      const first = await waitFor(() => readJson(join(r.state_dir, 'run.json')).pid, 10_000, 'the supervisor')
      await waitFor(() => existsSync(mark), 10_000, 'the read from inside')
      expect(readJson(join(r.state_dir, 'run.json'))).toMatchObject({pid: first, status: 'running'})
      // One read did not always show the adopter in run.json on a loaded machine (CI, the host killed): read until one does.
      const adopted = () => {
        read(home)
        return readJson(join(r.state_dir, 'run.json')).pid !== first
      }
      await waitFor(adopted, 5000, 'a read from outside to take the Run over')
      expect(await waitForResult(r.state_dir, 8000)).toMatchObject({status: 'failed', exit_code: 3})
    })
  })
}

describe.each([
  ['cgroup', {}],
  ['tracked', {ACTORS_CONTAINMENT: 'tracked'}],
])('a Run that writes another host in run.json (%s)', (_containment, env) => {
  it('and kills its supervisor keeps its lock while its command lives: the next Run of the lock waits', async () => {
    const home = newHome()
    const edit = editor(home)
    const recipes = join(home, 'recipes-in')
    mkdirSync(recipes)
    const script = `node ${edit} $ACTORS_STATE_DIR/run.json 'j.host="elsewhere"'; ${KILL_SUPERVISOR}; exec sleep 30`
    writeFileSync(join(recipes, 'liar.yaml'), `locks: [L]\ntemplate: [sh, -c, ${JSON.stringify(script)}]\n`)
    writeFileSync(join(recipes, 'next.yaml'), 'locks: [L]\ntemplate: [true]\n')
    const liar = launch(home, ['liar', '--recipes', recipes], env)
    await waitFor(() => readJson(join(liar.state_dir, 'run.json')).host === 'elsewhere', 10_000, 'the rewrite')
    await sleep(300)
    // The lock's own check comes first here: no read has taken the Run over yet.
    const status = actors(home, ['lock', 'status', 'L', '--json'])
    expect(status.code, status.stderr).toBe(0)
    expect(JSON.stringify(status.json)).toContain(liar.run)
    const next = launch(home, ['next', '--recipes', recipes], env)
    await sleep(1000)
    expect(readJson(join(next.state_dir, 'run.json')).status).toBe('queued')
    expect(actors(home, ['control', liar.run, 'kill']).code).toBe(0)
    expect(await waitForResult(next.state_dir, 10_000)).toMatchObject({status: 'done'})
  })
})
