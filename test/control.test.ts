/**
 * `actors control` runtime actions against real processes: pause/resume seen
 * in /proc, stop and kill leaving no descendant (forked, setsid'd), the
 * identity guard refusing a tampered record, and the refusal exit codes.
 */
import {existsSync, readFileSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {
  actors,
  homeWithRecipes,
  processAlive,
  processState,
  readJson,
  waitFor,
  waitForResult,
  removeHome,
} from './helpers.js'
import {continueBehindTheKernel, isPaused} from './frozen.js'

let home: string
let recipes: string

beforeAll(() => {
  // Ignores SIGTERM everywhere (the ignore disposition survives exec), so only SIGKILL after kill_grace ends it.
  const stubborn = [
    'description: ignores TERM',
    'template: [sh, -c, \'trap "" TERM; sleep 300 & sleep 301 & wait\']',
    'kill_grace: 1s',
    'control: [next]',
    '',
  ]
  ;({home, recipes} = homeWithRecipes({'stubborn.yaml': stubborn.join('\n')}))
})
afterAll(() => removeHome(home))

function launch(args: string[]): {run: string; state_dir: string} {
  const r = actors(home, ['run', '--json', ...args])
  expect(r.code, r.stderr).toBe(0)
  return r.json
}

/**
 * The Run's processes once the command has forked `count` of them (from `control status`)
 * and the supervisor has recorded its command in run.json. `control status` also finds the
 * command by the Run's environment marker before that record is written, and a test that
 * then reads or rewrites run.json, or signals the Run, would race the supervisor's write.
 */
async function runPids(run: string, count: number): Promise<number[]> {
  return waitFor(
    () => {
      if (!readJson(join(home, 'runs', run, 'run.json')).children_processes?.length) return undefined
      const s = actors(home, ['control', run, 'status', '--json'])
      return s.code === 0 && s.json.pids.length >= count ? (s.json.pids as number[]) : undefined
    },
    10_000,
    `${count} processes of ${run}`,
  )
}

describe('pause and resume', () => {
  it('stops every process of the Run (T in /proc, or a frozen cgroup) and continues them', async () => {
    const {run, state_dir} = launch(['--name', 'pr', '--', 'sh', '-c', 'sleep 300 & setsid sleep 301 & wait'])
    const pids = await runPids(run, 3)

    const paused = actors(home, ['control', run, 'pause', '--json'])
    expect(paused.code, paused.stderr).toBe(0)
    expect(paused.json).toMatchObject({action: 'pause', status: 'paused', handled_by: 'kernel', changed: true})
    for (const pid of pids) expect(isPaused(pid), `pid ${pid}`).toBe(true)
    expect(actors(home, ['inspect', run, '--json']).json.status).toBe('paused')

    const resumed = actors(home, ['control', run, 'resume', '--json'])
    expect(resumed.code, resumed.stderr).toBe(0)
    expect(resumed.json.status).toBe('running')
    for (const pid of pids) expect(isPaused(pid), `pid ${pid}`).toBe(false)
    expect(readJson(join(state_dir, 'run.json')).status).toBe('running')

    // A paused Run can be killed (SIGKILL needs no SIGCONT).
    expect(actors(home, ['control', run, 'pause']).code).toBe(0)
    const killed = actors(home, ['control', run, 'kill', '--json'])
    expect(killed.code, killed.stderr).toBe(0)
    expect(killed.json).toMatchObject({status: 'killed', settled: true})
    for (const pid of pids) expect(processAlive(pid), `pid ${pid}`).toBe(false)
    expect(readJson(join(state_dir, 'result.json'))).toMatchObject({status: 'killed', reason: 'kill'})
  })

  it('a pause right after the launch waits for the command to start, then stops it; resume continues every process', async () => {
    const {run, state_dir} = launch(['--name', 'early', '--', 'sleep', '300'])
    const paused = actors(home, ['control', run, 'pause', '--json'])
    expect(paused.code, paused.stderr).toBe(0)
    // The unit's wrapper (it records the command's end: SPEC Supervision), and the command once the wrapper forked it
    // (a pause that lands first stops the wrapper before it starts the command).
    expect(paused.json.signalled.length).toBeGreaterThanOrEqual(1)
    expect(paused.json.signalled.length).toBeLessThanOrEqual(2)
    for (const pid of paused.json.signalled) expect(isPaused(pid)).toBe(true)
    expect(paused.json.signalled).toContain(readJson(join(state_dir, 'run.json')).child_pid)
    expect(actors(home, ['control', run, 'resume']).code).toBe(0)
    const both = await runPids(run, 2)
    for (const pid of both) expect(isPaused(pid)).toBe(false)
    expect(actors(home, ['control', run, 'kill']).code).toBe(0)
  })

  it('resume lets a sequence go on when the paused step ended meanwhile (nothing left to continue)', async () => {
    const gate = join(home, 'step-one-may-end')
    const marker = join(home, 'step-two-ran')
    writeFileSync(
      join(recipes, 'two-steps.yaml'),
      `description: two steps\nsequence:\n  - [sh, -c, 'while [ ! -e ${gate} ]; do sleep 0.05; done']\n  - [touch, ${marker}]\n`,
    )
    const {run, state_dir} = launch(['two-steps', '--name', 'seq', '--recipes', recipes])
    await runPids(run, 1)
    expect(actors(home, ['control', run, 'pause']).code).toBe(0)
    // Someone else continues the first step's process group and lets it finish: the supervisor now holds the second step.
    writeFileSync(gate, '')
    continueBehindTheKernel(state_dir)
    await waitFor(
      () => readFileSync(join(state_dir, 'trace.jsonl'), 'utf8').includes('runtime.held'),
      10_000,
      'the supervisor to hold step two',
    )
    expect(existsSync(marker)).toBe(false)
    // Paused with no process: a second pause changes nothing, resume releases the hold.
    expect(actors(home, ['control', run, 'pause', '--json']).json).toMatchObject({
      status: 'paused',
      changed: false,
      signalled: [],
    })
    const resumed = actors(home, ['control', run, 'resume', '--json'])
    expect(resumed.code, resumed.stderr).toBe(0)
    expect(resumed.json).toMatchObject({status: 'running', signalled: []})
    await waitForResult(state_dir)
    expect(existsSync(marker)).toBe(true)
    expect(readJson(join(state_dir, 'result.json')).status).toBe('done')
  })
})

describe('stop and kill', () => {
  it('a stop or kill that lands while the supervisor is starting the command still ends it', async () => {
    for (const action of ['kill', 'stop'] as const) {
      // Test-only: the supervisor waits 1.5 s between its last check for an ending and the spawn.
      const r = actors(home, ['run', '--json', '--name', `late-${action}`, '--', 'sleep', '300'], {
        env: {ACTORS_TEST_SPAWN_DELAY_MS: '1500'},
      })
      expect(r.code, r.stderr).toBe(0)
      await waitFor(() => readJson(join(r.json.state_dir, 'run.json')).started_at, 10_000, 'the supervisor to start')
      expect(readJson(join(r.json.state_dir, 'run.json')).child_pid).toBeUndefined()
      expect(actors(home, ['control', r.json.run, action]).code).toBe(0)
      const result = await waitForResult(r.json.state_dir)
      expect(result.status, action).toBe(action === 'kill' ? 'killed' : 'cancelled')
      const pid = readJson(join(r.json.state_dir, 'run.json')).child_pid
      expect(pid, 'the command did start').toBeGreaterThan(0)
      expect(processAlive(pid), action).toBe(false)
    }
  })

  it('stop ends forked, nested and setsid descendants; result cancelled; inspect agrees at once', async () => {
    const {run} = launch([
      '--name',
      'st',
      '--',
      'sh',
      '-c',
      'sleep 300 & setsid sh -c "sleep 302 & wait" & sh -c "sleep 303 & wait" & wait',
    ])
    const pids = await runPids(run, 6)
    const r = actors(home, ['control', run, 'stop', '--json'])
    expect(r.code, r.stderr).toBe(0)
    expect(r.json).toMatchObject({action: 'stop', status: 'cancelled', settled: true})
    // Reported as signalled, though the group signal ended most of them before they could be listed again.
    expect(r.json.signalled).toEqual(expect.arrayContaining(pids))
    for (const pid of pids) expect(processAlive(pid), `pid ${pid}`).toBe(false)
    const inspected = actors(home, ['inspect', run, '--json']).json
    expect(inspected.status).toBe('cancelled')
    expect(inspected.result).toMatchObject({status: 'cancelled', reason: 'stop'})
  })

  it('stop escalates to SIGKILL after kill_grace when TERM is ignored', async () => {
    const {run} = launch(['stubborn', '--name', 'stub', '--recipes', recipes])
    const pids = await runPids(run, 3)
    const started = Date.now()
    const r = actors(home, ['control', run, 'stop', '--json'])
    expect(r.code, r.stderr).toBe(0)
    expect(Date.now() - started).toBeGreaterThanOrEqual(900)
    expect(r.json.status).toBe('cancelled')
    for (const pid of pids) expect(processAlive(pid), `pid ${pid}`).toBe(false)
  })

  it('kill ends a setsid daemon that left the group at once; result killed', async () => {
    const {run, state_dir} = launch(['--name', 'kl', '--', 'sh', '-c', 'setsid sh -c "sleep 305 & wait" & sleep 306'])
    const pids = await runPids(run, 4)
    const r = actors(home, ['control', run, 'kill', '--json'])
    expect(r.code, r.stderr).toBe(0)
    expect(r.json.status).toBe('killed')
    expect(r.json.signalled).toEqual(expect.arrayContaining(pids))
    for (const pid of pids) expect(processAlive(pid), `pid ${pid}`).toBe(false)
    expect(readJson(join(state_dir, 'result.json')).status).toBe('killed')
  })
})

describe('identity guard', () => {
  it('never signals a recorded pid whose identity does not match, and refuses with exit 3', async () => {
    const {run, state_dir} = launch(['--name', 'idg', '--', 'sleep', '300'])
    const [pid] = await runPids(run, 1)
    const file = join(state_dir, 'run.json')
    const original = readFileSync(file, 'utf8')
    const meta = JSON.parse(original)
    expect(meta.children_processes[0].pid).toBe(pid)
    meta.children_processes[0].identity.start = String(Number(meta.children_processes[0].identity.start) + 1)
    writeFileSync(file, JSON.stringify(meta))

    for (const action of ['pause', 'stop', 'kill']) {
      const r = actors(home, ['control', run, action, '--json'])
      expect(r.code, `${action}: ${r.stderr}`).toBe(3)
      expect(r.stderr).toMatch(/identity mismatch/)
      expect(r.json.error.pid).toBe(pid)
    }
    expect(processState(pid)).toBe('S')
    expect(readJson(file).ending).toBeUndefined()
    const status = actors(home, ['control', run, 'status', '--json']).json
    expect(status.identity_mismatch).toEqual([pid])

    writeFileSync(file, original)
    expect(actors(home, ['control', run, 'kill']).code).toBe(0)
    expect(processAlive(pid)).toBe(false)
  })
})

describe('refusals', () => {
  it('exit 4 unknown Run, 3 finished Run, 2 bad action or value', async () => {
    expect(actors(home, ['control', 'no-such-run', 'status']).code).toBe(4)
    expect(actors(home, ['control', '../../etc', 'stop']).code).toBe(2)

    const {run} = launch(['--name', 'fin', '--', 'true'])
    await waitFor(() => actors(home, ['inspect', run, '--json']).json?.status === 'done', 10_000, 'fin done')
    for (const action of ['pause', 'resume', 'stop', 'kill']) {
      const r = actors(home, ['control', run, action])
      expect(r.code, `${action}: ${r.stderr}`).toBe(3)
      expect(r.stderr).toContain('is done')
    }
    const status = actors(home, ['control', run, 'status', '--json'])
    expect(status.code).toBe(0)
    expect(status.json).toMatchObject({status: 'done', pids: [], result: {exit_code: 0}})

    const live = launch(['stubborn', '--name', 'decl', '--recipes', recipes])
    // The kill at the end must not land while the supervisor is still starting the command.
    await runPids(live.run, 1)
    const undeclared = actors(home, ['control', live.run, 'shuffle', '--json'])
    expect(undeclared.code).toBe(2)
    expect(undeclared.stderr).toContain('declared actions: next')
    expect(undeclared.json.error.declared).toEqual(['next'])
    expect(actors(home, ['control', live.run, 'pause', 'now']).code).toBe(2)
    expect(actors(home, ['control', live.run, 'Bad Action']).code).toBe(2)
    expect(actors(home, ['control', live.run, 'a'.repeat(65)]).code).toBe(2)
    const huge = actors(home, ['control', live.run, 'next', 'x'.repeat(4097)])
    expect(huge.code).toBe(2)
    expect(huge.stderr).toContain('4096-byte limit')
    expect(actors(home, ['control', live.run, 'kill']).code).toBe(0)
  })
})
