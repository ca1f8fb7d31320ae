/**
 * Run trees end to end: real `actors run` calls made inside Runs (the
 * supervisor puts bin/ on PATH), the limits (depth, budget, max-parallel
 * queue) and the cascade of stop to grandchildren.
 */
import {existsSync, readFileSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'
import {actors, homesPerTest, processAlive, readJson, waitFor, waitForResult} from './helpers.js'

const home = homesPerTest('actors-tree-')

const runJson = (h: string, id: string) => readJson(join(h, 'runs', id, 'run.json'))
const stdoutOf = (h: string, id: string) => readFileSync(join(h, 'runs', id, 'stdout.log'), 'utf8')

describe('nested trees', () => {
  it('records lineage three levels deep and shows the forest with usage', async () => {
    const h = home()
    const leaf = 'actors emit usage --tokens 5 >/dev/null; echo leaf-out'
    const mid = `actors run --name leaf -- sh -c '${leaf}' >/dev/null; sleep 0.3`
    const root = `actors emit usage --tokens 10 >/dev/null; actors run --name mid -- sh -c "${mid}" >/dev/null; sleep 0.8`
    const r = actors(h, ['run', '--name', 'root', '--json', '--', 'sh', '-c', root])
    expect(r.code, r.stderr).toBe(0)
    await waitForResult(join(h, 'runs', 'root'))
    await waitForResult(join(h, 'runs', 'leaf'))

    const rootMeta = runJson(h, 'root')
    const midMeta = runJson(h, 'mid')
    const leafMeta = runJson(h, 'leaf')
    expect(rootMeta.depth).toBe(0)
    expect(rootMeta.parent).toBeUndefined()
    expect(midMeta.parent).toEqual({
      run: 'root',
      run_instance_id: rootMeta.run_instance_id,
      state_dir: join(h, 'runs', 'root'),
    })
    expect(leafMeta.parent).toEqual({
      run: 'mid',
      run_instance_id: midMeta.run_instance_id,
      state_dir: join(h, 'runs', 'mid'),
    })
    expect([midMeta.depth, leafMeta.depth]).toEqual([1, 2])
    expect([midMeta.root, leafMeta.root]).toEqual(['root', 'root'])
    expect(leafMeta.owner).toBe('default')
    // Children are journalled in the parent's dir, so counting never scans the state root.
    expect(readFileSync(join(h, 'runs', 'root', 'children.jsonl'), 'utf8')).toContain('"run":"mid"')

    const tree = actors(h, ['inspect', '--tree', '--json'])
    expect(tree.code).toBe(0)
    const [top] = tree.json.forest
    expect(top.run).toBe('root')
    expect(top.usage).toBe(10)
    expect(top.children[0].run).toBe('mid')
    expect(top.children[0].usage).toBeNull()
    expect(top.children[0].children[0]).toMatchObject({run: 'leaf', status: 'done', usage: 5})
    expect(typeof top.children[0].children[0].duration_ms).toBe('number')
    // mid never reported usage: the total is unknown, never a smaller complete number.
    expect(top.tree_usage).toMatchObject({tokens: null, reported_tokens: 15, unreported_runs: 1})
    const sub = actors(h, ['inspect', '--tree', 'mid', '--json'])
    expect(sub.json.forest.map((n: any) => n.run)).toEqual(['mid'])
    expect(sub.json.forest[0].tree_usage).toMatchObject({tokens: null, reported_tokens: 5})
    const plain = actors(h, ['inspect', '--tree'])
    expect(plain.stdout).toMatch(/root\s+done/)
    expect(plain.stdout).toMatch(/└─ leaf\s+done/)
    expect(plain.stdout).toContain('tree usage: unknown (15 reported')
    expect(actors(h, ['inspect']).stdout).toMatch(/leaf.*mid/)
    // A lone Run gets no tree-usage line: its row is the whole tree.
    await waitForResult(actors(h, ['run', '--json', '--silent', '--name', 'alone', '--', 'true']).json.state_dir)
    const lines = actors(h, ['inspect', '--tree']).stdout.split('\n')
    expect(lines[lines.findIndex((line) => /^alone\s+done/.test(line)) + 1] ?? '').not.toContain('tree usage')
    expect(lines.filter((line) => line.includes('tree usage'))).toHaveLength(1)

    // The completion batch is one forest, in preorder, with depth and parent.
    const batch = actors(h, ['wait', '--json', '--timeout', '5s'])
    expect(batch.code).toBe(0)
    expect(batch.json.rows.map((row: any) => [row.run, row.depth, row.parent])).toEqual([
      ['root', 0, null],
      ['mid', 1, 'root'],
      ['leaf', 2, 'mid'],
    ])
    expect(batch.json.rows[2].output).toBe('leaf-out\n')
  })

  it('refuses a Run deeper than ACTORS_MAX_DEPTH with exit 5', async () => {
    const h = home()
    const inner = `actors run -- true >/dev/null 2>err.txt; echo "grandchild=$?"; cat err.txt`
    const r = actors(
      h,
      [
        'run',
        '--name',
        'top',
        '--',
        'sh',
        '-c',
        `cd "$ACTORS_STATE_DIR"; actors run --name kid -- sh -c '${inner}' >/dev/null; echo "child=$?"`,
      ],
      {
        env: {ACTORS_MAX_DEPTH: '1'},
      },
    )
    expect(r.code, r.stderr).toBe(0)
    await waitForResult(join(h, 'runs', 'top'))
    await waitForResult(join(h, 'runs', 'kid'))
    expect(stdoutOf(h, 'top')).toContain('child=0')
    const kidOut = stdoutOf(h, 'kid')
    expect(kidOut).toContain('grandchild=5')
    expect(kidOut).toContain('depth 2 is over the limit of 1')
    const bad = actors(h, ['run', '--', 'true'], {env: {ACTORS_MAX_DEPTH: 'lots'}})
    expect(bad.code).toBe(2)
    expect(bad.stderr).toContain('ACTORS_MAX_DEPTH')
  })

  it('refuses launches once the tree spent its budget and marks the Run that crossed it', async () => {
    const h = home()
    const script = [
      'actors emit usage --tokens 60 >/dev/null',
      'actors run --name under -- true >/dev/null; echo "first=$?"',
      'actors emit usage --tokens 50 >/dev/null',
      'actors run --name over -- true >/dev/null 2>refusal.txt; echo "second=$?"',
      'cat refusal.txt',
    ].join('; ')
    expect(
      actors(h, ['run', '--name', 'budgeted', '--budget-tokens', '100', '--cwd', h, '--', 'sh', '-c', script]).code,
    ).toBe(0)
    const result = await waitForResult(join(h, 'runs', 'budgeted'))
    const out = stdoutOf(h, 'budgeted')
    expect(out).toContain('first=0')
    expect(out).toContain('second=5')
    expect(out).toContain('spent 110 of 100 tokens')
    expect(existsSync(join(h, 'runs', 'over'))).toBe(false)
    expect(result.budget_exceeded).toBe(true)
    expect(result.budget).toMatchObject({spent_tokens: 110, budget_tokens: 100})
    const under = await waitForResult(join(h, 'runs', 'under'))
    expect(under.budget_exceeded).toBeUndefined()
    // A budget belongs on a root only.
    const nested = actors(h, ['run', '--budget-tokens', '5', '--', 'true'], {
      env: {
        ACTORS_RUN: 'budgeted',
        ACTORS_RUN_INSTANCE: runJson(h, 'budgeted').run_instance_id,
        ACTORS_STATE_DIR: join(h, 'runs', 'budgeted'),
      },
    })
    expect(nested.code).toBe(2)
  })

  it('takes root and depth from the parent Run, not from ACTORS_ROOT / ACTORS_DEPTH', async () => {
    const h = home()
    expect(actors(h, ['run', '--name', 'budgeted', '--budget-tokens', '100', '--', 'sleep', '10']).code).toBe(0)
    const lineage = {
      ACTORS_RUN: 'budgeted',
      ACTORS_RUN_INSTANCE: runJson(h, 'budgeted').run_instance_id,
      ACTORS_STATE_DIR: join(h, 'runs', 'budgeted'),
      ACTORS_ROOT: 'elsewhere',
      ACTORS_DEPTH: '5',
    }
    const kid = actors(h, ['run', '--name', 'kid', '--', 'true'], {env: {...lineage, ACTORS_MAX_DEPTH: '1'}})
    expect(kid.code, kid.stderr).toBe(0)
    expect([runJson(h, 'kid').root, runJson(h, 'kid').depth]).toEqual(['budgeted', 1])
    expect(actors(h, ['emit', 'usage', '--tokens', '150'], {env: lineage}).code).toBe(0)
    const over = actors(h, ['run', '--', 'true'], {env: lineage})
    expect(over.code, over.stderr).toBe(5)
    expect(over.stderr).toContain('spent 150 of 100 tokens')
  })

  it('keeps ACTORS_TEST_* fault injection to the supervisor it was given to: commands and nested Runs never see it', async () => {
    const h = home()
    const inner = `env > ${h}/inner.env; sleep 300`
    const outer = `env > ${h}/outer.env; actors run --name inner -- sh -c "${inner}" >/dev/null; sleep 300`
    const faults = {ACTORS_TEST_SPAWN_DELAY_MS: '50', ACTORS_TEST_WAIT_PAUSE_MS: '50'}
    const r = actors(h, ['run', '--name', 'outer', '--json', '--', 'sh', '-c', outer], {env: faults})
    expect(r.code, r.stderr).toBe(0)
    const innerEnv = await waitFor(
      () =>
        existsSync(join(h, 'inner.env')) &&
        readFileSync(join(h, 'inner.env'), 'utf8').includes('ACTORS_RUN=inner') &&
        readFileSync(join(h, 'inner.env'), 'utf8'),
      20_000,
      'the nested command to dump its environment',
    )
    const environ = (pid: number) => readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0')
    // The outer supervisor did get the faults (the test injected them for real)...
    expect(environ(runJson(h, 'outer').pid)).toEqual(
      expect.arrayContaining(['ACTORS_TEST_SPAWN_DELAY_MS=50', 'ACTORS_TEST_WAIT_PAUSE_MS=50']),
    )
    // ...but neither its command, nor the nested Run's supervisor, nor the nested command saw them.
    const seen = {
      outerCommand: readFileSync(join(h, 'outer.env'), 'utf8').split('\n'),
      innerSupervisor: environ(runJson(h, 'inner').pid),
      innerCommand: innerEnv.split('\n'),
    }
    expect(seen.outerCommand).toContain('ACTORS_RUN=outer')
    expect(seen.innerSupervisor).toEqual(expect.arrayContaining(['ACTORS_SUPERVISOR=1', `ACTORS_HOME=${h}`]))
    for (const [where, lines] of Object.entries(seen))
      expect(
        lines.filter((line) => line.startsWith('ACTORS_TEST_')),
        where,
      ).toEqual([])
  })

  it('refuses partial lineage with "lineage is incomplete"', () => {
    const h = home()
    const r = actors(h, ['run', '--', 'true'], {env: {ACTORS_RUN: 'ghost'}})
    expect(r.code).toBe(2)
    expect(r.stderr).toContain('lineage is incomplete')
    const missing = actors(h, ['run', '--', 'true'], {
      env: {ACTORS_RUN: 'ghost', ACTORS_RUN_INSTANCE: 'x', ACTORS_STATE_DIR: join(h, 'runs', 'ghost')},
    })
    expect(missing.code).toBe(2)
    expect(missing.stderr).toContain('lineage is incomplete')
  })
})

describe('owners', () => {
  it("a child's owner is its parent's, whatever ACTORS_OWNER says, so the root's wait still collects the subtree", async () => {
    const h = home()
    const grandchild = 'actors run --name gc -- true >/dev/null'
    const script = `ACTORS_OWNER=eve actors run --name kid -- sh -c '${grandchild}' >/dev/null; sleep 0.5; ACTORS_OWNER=eve actors wait --json > "$ACTORS_STATE_DIR/batch.json"`
    expect(actors(h, ['run', '--name', 'root', '--', 'sh', '-c', script], {env: {ACTORS_OWNER: 'ada'}}).code).toBe(0)
    await waitForResult(join(h, 'runs', 'root'), 30_000)
    expect(['root', 'kid', 'gc'].map((id) => runJson(h, id).owner)).toEqual(['ada', 'ada', 'ada'])
    // The coordinator's own wait (ACTORS_OWNER=eve in its environment) collected its subtree for the tree's owner.
    const inner = readJson(join(h, 'runs', 'root', 'batch.json'))
    expect(inner.owner).toBe('ada')
    expect(inner.rows.map((r: any) => r.run)).toEqual(['kid', 'gc'])
    // eve has nothing; the root's owner gets the root, its subtree already reported to the coordinator.
    expect(actors(h, ['wait', '--json'], {env: {ACTORS_OWNER: 'eve'}}).json.members).toBe(0)
    expect(actors(h, ['wait', '--json'], {env: {ACTORS_OWNER: 'ada'}}).json.rows.map((r: any) => r.run)).toEqual([
      'root',
    ])
  })
})

describe('max-parallel', () => {
  it('never runs more than N children; the rest queue FIFO and start after the parent exited', async () => {
    const h = home()
    // Children block until the test creates `go`, so the queue is observed deterministically.
    const go = join(h, 'go')
    const child = `while [ ! -e ${go} ]; do sleep 0.05; done`
    const launches = [1, 2, 3, 4, 5].map((i) => `actors run --name c${i} -- sh -c '${child}' >/dev/null`).join('; ')
    expect(actors(h, ['run', '--name', 'fan', '--max-parallel', '2', '--', 'sh', '-c', launches]).code).toBe(0)
    await waitForResult(join(h, 'runs', 'fan'), 30_000)
    expect(['c1', 'c2', 'c3', 'c4', 'c5'].map((id) => runJson(h, id).status)).toEqual([
      'running',
      'running',
      'queued',
      'queued',
      'queued',
    ])
    writeFileSync(go, '')
    const ids = ['c1', 'c2', 'c3', 'c4', 'c5']
    let maxRunning = 0
    await waitFor(
      () => {
        const statuses = ids.map((id) => {
          try {
            return runJson(h, id).status as string
          } catch {
            return 'absent'
          }
        })
        const running = statuses.filter((s) => s === 'running').length
        maxRunning = Math.max(maxRunning, running)
        return statuses.every((s) => s === 'done')
      },
      30_000,
      'all children done',
    )
    // The parent's command exited long before its last children started.
    expect(Date.parse(runJson(h, 'fan').ended_at)).toBeLessThan(Date.parse(runJson(h, 'c5').started_at))
    expect(maxRunning).toBeLessThanOrEqual(2)
    // FIFO: c3 and c4 took the slots c1 and c2 freed; c5, queued last, only got a slot once c3 or c4 ended.
    const at = (id: string, field: string) => Date.parse(runJson(h, id)[field])
    expect(Math.min(at('c3', 'started_at'), at('c4', 'started_at'))).toBeGreaterThanOrEqual(
      Math.min(at('c1', 'ended_at'), at('c2', 'ended_at')),
    )
    expect(at('c5', 'started_at')).toBeGreaterThanOrEqual(Math.min(at('c3', 'ended_at'), at('c4', 'ended_at')))
    expect(readFileSync(join(h, 'runs', 'fan', 'children.jsonl'), 'utf8').match(/"queued":true/g)?.length).toBe(3)
  })
})

describe('cascade', () => {
  it('stop of a Run cancels its descendants deepest first, queued ones included', async () => {
    const h = home()
    const mid = 'actors run --name g1 -- sleep 30 >/dev/null; actors run --name g2 -- sleep 30 >/dev/null; sleep 30'
    expect(
      actors(h, [
        'run',
        '--name',
        'boss',
        '--',
        'sh',
        '-c',
        `actors run --name mid --max-parallel 1 -- sh -c '${mid}' >/dev/null; sleep 30`,
      ]).code,
    ).toBe(0)
    // g1 counts as running from its launch; wait for its supervisor to record the command too, or the stop could land while it is still starting it.
    await waitFor(
      () => runJson(h, 'g2').status === 'queued' && runJson(h, 'g1').status === 'running' && runJson(h, 'g1').child_pid,
      15_000,
      'g1 running its command, g2 queued',
    )
    const stop = actors(h, ['control', 'boss', 'stop', '--json'])
    expect(stop.code, stop.stderr).toBe(0)
    expect(stop.json.descendants.ended).toEqual(['g1', 'mid'])
    expect(stop.json.descendants.cancelled_queued).toEqual(['g2'])
    for (const id of ['boss', 'mid', 'g1', 'g2']) {
      const result = await waitForResult(join(h, 'runs', id))
      expect([id, result.status]).toEqual([id, 'cancelled'])
    }
    // g2 never started: no supervisor ever ran for it.
    expect(runJson(h, 'g2').started_at).toBeUndefined()
    expect(Date.parse(runJson(h, 'g1').ended_at)).toBeLessThanOrEqual(Date.parse(runJson(h, 'mid').ended_at))
  })

  // Red-team 14 (a note): a Run that ended from its tree's first SIGTERM was reported as "stop sent to 0 process(es)".
  it('stop of a Run with children says what its first signal reached', async () => {
    const h = home()
    const loop = 'trap "exit 0" TERM; while :; do actors run -- sleep 5 >/dev/null; sleep 0.5; done'
    expect(actors(h, ['run', '--name', 'looper', '--', 'sh', '-c', loop]).code).toBe(0)
    await waitFor(() => existsSync(join(h, 'runs', 'looper.1')), 15_000, 'a child launched')
    const stop = actors(h, ['control', 'looper', 'stop', '--json'])
    expect(stop.code, stop.stderr).toBe(0)
    expect(stop.json).toMatchObject({status: 'cancelled'})
    expect(stop.json.signalled.length).toBeGreaterThan(0)
    expect(stop.json.descendants).not.toHaveProperty('selfSignalled')
  })
})

describe('a read starts nothing', () => {
  /** `actors` as if called by the command of Run `id` (its lineage in the environment). */
  const inside = (h: string, id: string) => {
    const meta = runJson(h, id)
    return {
      ACTORS_RUN: id,
      ACTORS_RUN_INSTANCE: meta.run_instance_id,
      ACTORS_STATE_DIR: join(h, 'runs', id),
      ACTORS_ROOT: meta.root,
      ACTORS_DEPTH: String(meta.depth),
      ACTORS_OWNER: meta.owner,
    }
  }

  // c1's process group, ended again after each test in case a case failed before its own kill.
  const orphanGroups: number[] = []
  afterEach(() => {
    for (const pgid of orphanGroups.splice(0)) {
      try {
        process.kill(-pgid, 'SIGKILL')
      } catch {}
    }
  })

  /** Parent `p` (max-parallel 1) with child c1 running and cq queued behind it; then c1's supervisor and command are SIGKILLed. */
  async function lostChildWithQueuedSibling(h: string): Promise<NodeJS.ProcessEnv> {
    expect(actors(h, ['run', '--name', 'p', '--max-parallel', '1', '--', 'sleep', '60']).code).toBe(0)
    await waitFor(() => runJson(h, 'p').process_identity, 15_000, 'p supervised')
    const env = inside(h, 'p')
    expect(actors(h, ['run', '--name', 'c1', '--', 'sleep', '60'], {env}).code).toBe(0)
    expect(actors(h, ['run', '--name', 'cq', '--json', '--', 'true'], {env}).json.status).toBe('queued')
    const c1 = await waitFor(
      () => {
        const meta = runJson(h, 'c1')
        return meta.process_identity && meta.child_pid && meta
      },
      15_000,
      'c1 running its command',
    )
    orphanGroups.push(c1.pgid)
    process.kill(c1.pid, 'SIGKILL')
    // Its command too: a unit that lives on is taken over (SPEC: Supervision); one gone with no recorded end is lost.
    process.kill(-c1.pgid, 'SIGKILL')
    await waitFor(() => !processAlive(c1.pid), 10_000, 'c1 supervisor gone')
    expect(runJson(h, 'c1').status).toBe('running')
    return env
  }

  it('a launch that settles a lost sibling under the children lock returns at once and the queue moves on', async () => {
    const h = home()
    const env = await lostChildWithQueuedSibling(h)
    const started = Date.now()
    const r = actors(h, ['run', '--name', 'c2', '--json', '--', 'true'], {env})
    const took = Date.now() - started
    expect(r.code, r.stderr).toBe(0)
    // Before: the settle of c1 asked for the children lock its own caller held, and waited out its 10 s timeout.
    expect(took).toBeLessThan(3000)
    expect(runJson(h, 'c1').status).toBe('exited')
    // cq was first in line for c1's slot; c2 follows it once it ends.
    expect((await waitForResult(join(h, 'runs', 'cq'))).status).toBe('done')
    expect((await waitForResult(join(h, 'runs', 'c2'))).status).toBe('done')
    expect(Date.parse(runJson(h, 'c2').started_at)).toBeGreaterThanOrEqual(Date.parse(runJson(h, 'cq').ended_at))
  })

  it('a listing settles the lost Run and, after it, the command releases the queued sibling', async () => {
    const h = home()
    await lostChildWithQueuedSibling(h)
    const listing = actors(h, ['inspect', '--json'])
    expect(listing.code, listing.stderr).toBe(0)
    expect(listing.json.runs.find((r: any) => r.run === 'c1').status).toBe('exited')
    expect((await waitForResult(join(h, 'runs', 'cq'))).status).toBe('done')
  })

  it('a wait that settles the lost Run releases the queued sibling while it waits, not after', async () => {
    const h = home()
    await lostChildWithQueuedSibling(h)
    const r = actors(h, ['wait', 'cq', '--timeout', '20s', '--json'])
    expect(r.code, r.stderr).toBe(0)
    expect(r.json.rows.map((row: any) => [row.run, row.status])).toEqual([['cq', 'done']])
  })
})
