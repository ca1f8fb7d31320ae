/**
 * A state root with history (issue 12): the run index that lets live commands
 * cost what is live (it must never change an answer: copied-in and
 * hand-edited state dirs, a damaged, foreign or deleted index, concurrent
 * launches and waits), delivery bookkeeping that does not grow with history,
 * the `inspect` filters and bounds, and the 1 MiB bound of a batch document.
 * Timing targets live in the bench (`npm run bench`), not here.
 */
import {spawn} from 'node:child_process'
import {
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {
  BIN,
  actors,
  actorsAsync,
  cliEnv,
  homesPerTest,
  indexEntries,
  readJson,
  waitFor,
  waitForResult,
  writeFinishedRun,
  type CliResult,
} from './helpers.js'

const home = homesPerTest('actors-history-')

const runsOf = (r: CliResult) => (r.json?.rows ?? []).map((row: any) => row.run)
const listed = (r: CliResult) => (r.json?.runs ?? []).map((run: any) => run.run)
/** Index entries as `run@instance`, whatever their form (a queued marker's name starts with `~<ended>~<owner tag>~<root tag>~`). */
const markers = (h: string) => indexEntries(h).map((n) => n.slice(n.lastIndexOf('~') + 1))

/** Bytes of every file of the state root outside runs/. */
function bytesOutsideRuns(dir: string, top = true): number {
  let total = 0
  for (const entry of readdirSync(dir, {withFileTypes: true})) {
    if (top && entry.name === 'runs') continue
    total += entry.isDirectory() ? bytesOutsideRuns(join(dir, entry.name), false) : statSync(join(dir, entry.name)).size
  }
  return total
}

/** `count` finished Runs `prefix-NNN`, ended one second apart (the first ended first). */
function seed(
  h: string,
  prefix: string,
  count: number,
  options: Parameters<typeof writeFinishedRun>[2] = {},
): string[] {
  const base = Date.parse('2026-01-01T00:00:00Z')
  return Array.from({length: count}, (_, i) => {
    const id = `${prefix}-${String(i).padStart(3, '0')}`
    writeFinishedRun(h, id, {ended: new Date(base + i * 1000).toISOString(), ...options})
    return id
  })
}

/** Drain with `wait --json` until nothing is left; every Run delivered, in order of delivery. */
function drain(h: string): string[] {
  const delivered: string[] = []
  for (let i = 0; i < 20; i++) {
    const r = actors(h, ['wait', '--json'])
    expect([0, 1]).toContain(r.code)
    if (r.json.members === 0) return delivered
    // Runs ended by an explicit control stop/kill are members without a row.
    delivered.push(...runsOf(r), ...r.json.overflow_runs, ...(r.json.stopped_runs ?? []).map((s: any) => s.run))
  }
  throw new Error('wait never drained')
}

describe('the run index', () => {
  it('reports 600 Runs once each and keeps nothing per Run outside runs/', () => {
    const h = home()
    const ids = seed(h, 'old', 600)
    const delivered = drain(h)
    expect(delivered.length).toBe(600)
    expect(new Set(delivered)).toEqual(new Set(ids))
    // Reported-ness lives in each Run's dir; the index and the journal hold nothing per reported Run.
    expect(readJson(join(h, 'runs', 'old-000', 'reported.json'))).toMatchObject({owner: 'default'})
    // One record per batch, hard-linked into each member (no new file per Run), and no scratch copy left outside runs/.
    const first = join(h, 'runs', 'old-000', 'reported.json')
    expect(readJson(first).run_instance_ids).toContain(readJson(join(h, 'runs', 'old-000', 'run.json')).run_instance_id)
    expect(readJson(first).run_instance_ids).toHaveLength(256)
    expect(statSync(first).nlink).toBe(256)
    expect(statSync(join(h, 'runs', 'old-255', 'reported.json')).ino).toBe(statSync(first).ino)
    expect(readdirSync(join(h, 'delivery')).filter((n) => n.endsWith('.reported'))).toEqual([])
    expect(markers(h)).toEqual([])
    const journal = readJson(join(h, 'delivery', 'default.json'))
    expect(journal.reported).toEqual({})
    expect(journal.pending).toEqual([])
    expect(bytesOutsideRuns(h)).toBeLessThan(16 * 1024)
    expect(actors(h, ['wait', '--json']).json.members).toBe(0)
  }, 240_000)

  it('a wait killed while marking its batch: the next wait delivers that batch again, every Run once', () => {
    const h = home()
    const ids = seed(h, 'mk', 300)
    // Killed after linking the batch record into 100 of its 256 members (printed, not yet dropped from the journal).
    const killed = actors(h, ['wait', '--json'], {env: {ACTORS_TEST_MARK_KILL_AFTER: '100'}})
    expect(killed.code).not.toBe(0)
    const printed = JSON.parse(killed.stdout)
    expect(printed.members).toBe(256)
    expect(readJson(join(h, 'delivery', 'default.json')).pending.map((p: any) => p.batch_id)).toEqual([
      printed.batch_id,
    ])
    const again = actors(h, ['wait', '--json'])
    expect(again.json).toMatchObject({batch_id: printed.batch_id, redelivered: true, members: 256})
    expect([...runsOf(again), ...again.json.overflow_runs]).toEqual([
      ...runsOf({json: printed} as CliResult),
      ...printed.overflow_runs,
    ])
    // Every member now holds the redelivery's record (the half-done one replaced whole), and nothing is left outside runs/.
    expect(statSync(join(h, 'runs', 'mk-000', 'reported.json')).nlink).toBe(256)
    expect(readdirSync(join(h, 'delivery')).filter((n) => n.endsWith('.reported'))).toEqual([])
    const rest = drain(h)
    expect(rest).toHaveLength(44)
    expect(new Set([...runsOf(again), ...again.json.overflow_runs, ...rest])).toEqual(new Set(ids))
  }, 120_000)

  it('reads both forms of reported.json, and a copied-in state dir carries its delivery state', () => {
    const h = home()
    seed(h, 'fm', 3)
    // The earlier form: one Run's own record.
    const own = join(h, 'runs', 'fm-001')
    const instance = readJson(join(own, 'run.json')).run_instance_id
    writeFileSync(
      join(own, 'reported.json'),
      JSON.stringify({
        run_instance_id: instance,
        owner: 'default',
        batch_id: 'old',
        reported_at: '2026-01-01T00:00:00Z',
      }),
    )
    // A batch record naming other instances only does not mark this one.
    const other = join(h, 'runs', 'fm-002')
    writeFileSync(
      join(other, 'reported.json'),
      JSON.stringify({
        run_instance_ids: ['a', 'b'],
        owner: 'default',
        batch_id: 'x',
        reported_at: '2026-01-01T00:00:00Z',
      }),
    )
    expect(drain(h)).toEqual(['fm-000', 'fm-002'])
    // A delivered Run copied in under another name (same instance) comes with its batch record: not reported again.
    const copy = join(h, 'runs', 'fm-copy')
    cpSync(join(h, 'runs', 'fm-000'), copy, {recursive: true})
    writeFileSync(
      join(copy, 'run.json'),
      JSON.stringify({...readJson(join(copy, 'run.json')), run: 'fm-copy', root: 'fm-copy'}),
    )
    expect(statSync(join(copy, 'reported.json')).nlink).toBe(1)
    expect(actors(h, ['wait', '--json']).json.members).toBe(0)
    expect(markers(h)).toEqual([])
  }, 60_000)

  it('notices a state dir copied in by hand and a hand-edited finished Run', async () => {
    const h = home()
    const dir = join(h, 'runs', 'kept')
    await waitForResult(
      actors(h, ['run', '--json', '--name', 'kept', '--', 'sh', '-c', 'echo kept-out']).json.state_dir,
    )
    expect(runsOf(actors(h, ['wait', '--json']))).toEqual(['kept'])
    // Restored from a backup under another name: unreported there, so it is delivered and listed.
    const copy = join(h, 'runs', 'restored')
    cpSync(dir, copy, {recursive: true})
    rmSync(join(copy, 'reported.json'))
    const meta = readJson(join(copy, 'run.json'))
    writeFileSync(join(copy, 'run.json'), JSON.stringify({...meta, run: 'restored', root: 'restored', state_dir: copy}))
    expect(listed(actors(h, ['inspect', '--limit', '5', '--json']))).toContain('restored')
    const got = actors(h, ['wait', '--json'])
    expect(runsOf(got)).toEqual(['restored'])
    expect(got.json.rows[0].output).toBe('kept-out\n')
    // A finished, unreported Run edited by hand is read as it is now, not as it was indexed.
    const edited = writeFinishedRun(h, 'edited')
    expect(actors(h, ['inspect', '--status', 'running', '--json']).json.runs).toEqual([])
    const editedMeta = readJson(join(edited, 'run.json'))
    writeFileSync(join(edited, 'run.json'), JSON.stringify({...editedMeta, status: 'failed', exit_code: 7}))
    writeFileSync(
      join(edited, 'result.json'),
      JSON.stringify({...readJson(join(edited, 'result.json')), status: 'failed', exit_code: 7}),
    )
    const after = actors(h, ['wait', '--json'])
    expect(after.code).toBe(1)
    expect(after.json.rows[0]).toMatchObject({run: 'edited', status: 'failed', exit_code: 7})
  })

  it('rebuilds a damaged, foreign or deleted index and never reports a Run twice', async () => {
    const h = home()
    seed(h, 'a', 3)
    expect(runsOf(actors(h, ['wait', '--json'])).sort()).toEqual(['a-000', 'a-001', 'a-002'])
    seed(h, 'b', 2)
    const live = actors(h, ['run', '--json', '--name', 'live', '--', 'sleep', '30']).json
    await waitFor(() => readJson(join(live.state_dir, 'run.json')).started_at, 10_000, 'the live Run to start')
    for (const damage of [
      () => writeFileSync(join(h, 'index', '.stamp.json'), '{not json'),
      () => writeFileSync(join(h, 'index', '.stamp.json'), JSON.stringify({schema: 'someone-else-v9', runs_count: 0})),
      () => rmSync(join(h, 'index'), {recursive: true, force: true}),
    ]) {
      damage()
      mkdirSync(join(h, 'index'), {recursive: true})
      writeFileSync(join(h, 'index', 'junk'), 'x')
      const running = actors(h, ['inspect', '--status', 'running', '--json'])
      expect(running.code, running.stderr).toBe(0)
      expect(listed(running)).toEqual(['live'])
      expect(markers(h).sort()).toEqual(
        ['b-000', 'b-001', 'live']
          .map((id) => `${id}@${readJson(join(h, 'runs', id, 'run.json')).run_instance_id}`)
          .concat('junk')
          .sort(),
      )
    }
    // Reported Runs stay reported through every rebuild; the unreported ones come once.
    const next = actors(h, ['wait', '--any', '--json'])
    expect(runsOf(next).sort()).toEqual(['b-000', 'b-001'])
    expect(actors(h, ['wait', '--json', '--timeout', '0']).json.members).toBe(0)
  })

  it('upgrades a journal of the earlier format: Runs it lists as reported are not reported again', () => {
    const h = home()
    const ids = seed(h, 'up', 4)
    const reported = Object.fromEntries(
      ids.slice(0, 3).map((id) => [id, readJson(join(h, 'runs', id, 'run.json')).run_instance_id]),
    )
    const journal = join(h, 'delivery', 'default.json')
    mkdirSync(join(h, 'delivery'), {recursive: true})
    writeFileSync(
      journal,
      JSON.stringify({
        schema: 'actors-delivery-v1',
        owner: 'default',
        reported,
        attention_reported: {},
        pending: [],
        delivered: [],
      }),
    )
    expect(runsOf(actors(h, ['wait', '--json']))).toEqual(['up-003'])
    expect(readJson(journal).reported).toEqual({})
    expect(actors(h, ['wait', '--json']).json.members).toBe(0)
  })

  it('concurrent launches and waits: every Run indexed and delivered exactly once', async () => {
    const h = home()
    const names = Array.from({length: 10}, (_, i) => `c${i}`)
    const launches = names.map((name) => actorsAsync(h, ['run', '--json', '--name', name, '--', 'sleep', '0.3']))
    const seen: string[] = []
    const loop = async () => {
      for (let i = 0; i < 30 && seen.length < names.length; i++) {
        const r = await actorsAsync(h, ['wait', '--any', '--json', '--timeout', '2s'])
        expect([0, 124]).toContain(r.code)
        seen.push(...runsOf(r), ...(r.json?.overflow_runs ?? []))
      }
    }
    const results = await Promise.all(launches)
    for (const r of results) expect(r.code, r.stderr).toBe(0)
    await Promise.all([loop(), loop()])
    expect([...seen].sort()).toEqual(names)
    expect(actors(h, ['wait', '--json', '--timeout', '0']).json.members).toBe(0)
    // After a read: an index rebuild that read a Run's run.json while it was live can re-enter its live
    // marker after the Run was delivered (the index is a cache); the next reader finds it settled and drops it.
    expect(markers(h)).toEqual([])
  })

  it('an index reader killed mid-rebuild leaves nothing half-done', async () => {
    const h = home()
    seed(h, 'k', 400)
    const child = spawn(process.execPath, [BIN, 'inspect', '--status', 'running', '--json'], {
      env: cliEnv(h),
      stdio: 'ignore',
    })
    const closed = new Promise((r) => child.once('close', r))
    // The index lock is a symbolic link to no file: lstat, not existsSync, sees it.
    await waitFor(
      () =>
        lstatSync(join(h, 'index', '.lock'), {throwIfNoEntry: false}) || existsSync(join(h, 'index', '.stamp.json')),
      10_000,
      'the rebuild to start',
    )
    child.kill('SIGKILL')
    await closed
    expect(drain(h).length).toBe(400)
    expect(markers(h)).toEqual([])
  }, 240_000)

  it('shares a large rebuild with a worker thread: every state dir entered once, even when the worker fails or hangs midway', async () => {
    for (const mode of ['worker-first', 'worker-fails', 'worker-stalls']) {
      const h = home()
      // Three chunks of state dirs (256 each): the worker does the first, then (worker-fails, worker-stalls) dies or hangs halfway through the next.
      const ids = seed(h, 'w', 600)
      const live = actors(h, ['run', '--json', '--name', 'live', '--', 'sleep', '30']).json
      await waitFor(() => readJson(join(live.state_dir, 'run.json')).started_at, 10_000, 'the live Run to start')
      rmSync(join(h, 'index'), {recursive: true, force: true})
      const started = Date.now()
      const running = actors(h, ['inspect', '--status', 'running', '--json'], {
        env: {ACTORS_TEST_SHARED_REBUILD_MIN: '2', ACTORS_TEST_SHARED_WORK: mode},
      })
      expect(running.code, running.stderr).toBe(0)
      // A hung worker is given up on after its stall time (half a second here), not waited for.
      if (mode === 'worker-stalls') expect(Date.now() - started).toBeLessThan(30_000)
      expect(listed(running)).toEqual(['live'])
      // What the worker found reached the rebuild, or (failed) its chunks were done again here.
      expect(running.stderr).toContain(`the worker's findings covered ${mode === 'worker-first' ? '' : '0 '}`)
      if (mode === 'worker-first') expect(running.stderr).not.toContain('covered 0 ')
      const queued = markers(h)
      expect(queued).toHaveLength(601)
      expect(new Set(queued).size).toBe(601)
      // The launch log has every Run once, oldest first.
      const launches = readFileSync(join(h, 'runs', '.cache', 'launches.log'), 'utf8')
        .trim()
        .split('\n')
        .map((line) => line.split(' ')[1])
      expect(launches.slice().sort()).toEqual([...ids, 'live'].sort())
      expect(actors(h, ['control', 'live', 'kill']).code).toBe(0)
      await waitForResult(live.state_dir)
      const delivered = drain(h)
      expect(delivered).toHaveLength(601)
      expect(new Set(delivered)).toEqual(new Set([...ids, 'live']))
    }
  }, 240_000)
})

describe('inspect filters and bounds', () => {
  it('--limit keeps the most recent and every live Run; --since, --recipe, --owner, --root filter', async () => {
    const h = home()
    const live = actors(h, ['run', '--json', '--name', 'old-live', '--', 'sleep', '30']).json
    await waitFor(() => readJson(join(live.state_dir, 'run.json')).started_at, 10_000, 'the live Run to start')
    for (const id of ['f1', 'f2', 'f3'])
      await waitForResult(actors(h, ['run', '--json', '--name', id, '--', 'true']).json.state_dir)
    const limited = actors(h, ['inspect', '--limit', '2', '--json'])
    expect(limited.code, limited.stderr).toBe(0)
    expect(listed(limited)).toEqual(['old-live', 'f2', 'f3'])
    expect(actors(h, ['inspect', '--limit', '2']).stdout).toMatch(/old-live[\s\S]*f2[\s\S]*f3/)
    expect(listed(actors(h, ['inspect', '--limit', '1', '--status', 'done', '--json']))).toEqual(['f3'])
    writeFinishedRun(h, 'ancient', {ended: '2020-01-01T00:00:00.000Z', meta: {recipe: 'build', owner: 'ci'}})
    expect(listed(actors(h, ['inspect', '--since', '1h', '--json'])).sort()).toEqual(['f1', 'f2', 'f3', 'old-live'])
    expect(listed(actors(h, ['inspect', '--recipe', 'build', '--json']))).toEqual(['ancient'])
    expect(listed(actors(h, ['inspect', '--owner', 'ci', '--json']))).toEqual(['ancient'])
    expect(actors(h, ['inspect', '--since', 'soon']).code).toBe(2)
    expect(actors(h, ['inspect', '--limit', '0']).code).toBe(2)
    // --root: a Run and its descendants, through the children journals.
    const script = 'actors run --name kid -- sh -c "actors run --name grandkid -- true >/dev/null" >/dev/null'
    await waitForResult(actors(h, ['run', '--json', '--name', 'top', '--', 'sh', '-c', script]).json.state_dir)
    await waitForResult(join(h, 'runs', 'grandkid'))
    expect(listed(actors(h, ['inspect', '--root', 'top', '--json'])).sort()).toEqual(['grandkid', 'kid', 'top'])
    expect(listed(actors(h, ['inspect', '--root', 'kid', '--json'])).sort()).toEqual(['grandkid', 'kid'])
    expect(actors(h, ['inspect', '--root', 'nope', '--json']).code).toBe(4)
  }, 240_000)

  it('a batch document stays within 1 MiB: outputs shortened first, then rows to overflow', () => {
    const h = home()
    // Control characters print as \u0001 in JSON: 4000 of them are 24,000 bytes, 64 rows 1.5 MB.
    for (const id of seed(h, 'loud', 70)) writeFileSync(join(h, 'runs', id, 'stdout.log'), '\u0001'.repeat(5000))
    const loud = actors(h, ['wait', '--json'])
    expect(Buffer.byteLength(loud.stdout)).toBeLessThanOrEqual(1024 * 1024)
    expect(loud.json.rows).toHaveLength(64)
    expect(loud.json.rows[0].output.length).toBeGreaterThan(0)
    expect(loud.json.rows[0].output.length).toBeLessThan(4000)
    // Rows that are large even without output (long artifact paths) move to overflow: counted, not lost.
    const path = '/' + '\u0002'.repeat(4000)
    const artifacts = Array.from({length: 4}, (_, i) => ({name: `a${i}`, path, bytes: 1, sha256: null}))
    seed(h, 'wide', 64, {result: {artifacts}})
    const wide = actors(h, ['wait', '--json'])
    expect(wide.code, wide.stderr).toBe(0)
    expect(Buffer.byteLength(wide.stdout)).toBeLessThanOrEqual(1024 * 1024)
    expect(wide.json.rows.length).toBeLessThan(64)
    expect(wide.json.rows.length + wide.json.overflow).toBe(64)
    expect(wide.json.overflow_runs).toContain('wide-063')
    expect(actors(h, ['wait', '--json']).json.members).toBe(0)
  }, 240_000)
})
