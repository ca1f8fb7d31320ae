/**
 * The listing cache (src/lib/runs/listing-cache.ts) must never change what
 * `inspect` shows: every listing below is compared with one made with the
 * cache file removed, after the ways a Run's run.json can change under it.
 */
import {readFileSync, rmSync, statSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {afterEach, beforeEach, describe, expect, it} from 'vitest'
import {actors, readJson, removeHome, tempDir, waitFor, waitForResult} from './helpers.js'

let home: string
beforeEach(() => {
  home = tempDir()
})
afterEach(() => removeHome(home))

const cacheFile = () => join(home, 'runs', '.cache', 'listing.json')
/** The cache's rows by Run id (each row starts with its Run id). */
const cachedRows = (): Record<string, unknown[]> => Object.fromEntries((readJson(cacheFile()).rows as unknown[][]).map((row) => [row[0], row]))

/** `inspect --json` twice: through whatever cache there is, then with none. Both must agree (live Runs' durations tick). */
function listing() {
  const cached = actors(home, ['inspect', '--json'])
  expect(cached.code).toBe(0)
  rmSync(cacheFile(), {force: true})
  const fresh = actors(home, ['inspect', '--json'])
  const settled = (json: {runs: Array<{status: string; duration_ms?: number}>}) => ({
    ...json,
    runs: json.runs.map((r) => (['running', 'paused', 'queued'].includes(r.status) ? {...r, duration_ms: undefined} : r)),
  })
  expect(settled(cached.json)).toEqual(settled(fresh.json))
  return fresh.json
}

/**
 * Wait for the supervisor to record the start and its command, so two listings
 * a moment apart see the same live Run, and a stop or kill cannot land while
 * the supervisor is still starting the command.
 */
async function started(stateDir: string) {
  await waitFor(() => {
    const meta = readJson(join(stateDir, 'run.json'))
    return meta.started_at && meta.child_pid
  }, 10_000, `${stateDir} to start`)
}

async function finished(name: string, ...command: string[]) {
  const launched = actors(home, ['run', '--json', '--name', name, '--', ...command])
  expect(launched.code).toBe(0)
  await waitForResult(launched.json.state_dir)
  return launched.json.state_dir as string
}

describe('the listing cache', () => {
  it('holds finished Runs only, and follows relaunches, damage and prunes', async () => {
    await finished('ok', 'true')
    await finished('bad', 'false')
    const live = actors(home, ['run', '--json', '--name', 'live', '--', 'sleep', '30']).json
    await started(live.state_dir)
    listing()
    actors(home, ['inspect', '--json'])
    expect(Object.keys(cachedRows()).sort()).toEqual(['bad', 'ok'])

    // A relaunch under the same name replaces run.json: the new generation shows, not the cached one.
    const relaunched = actors(home, ['run', '--json', '--name', 'ok', '--', 'sleep', '30']).json
    await started(relaunched.state_dir)
    let runs = listing().runs
    expect(runs.find((r: {run: string}) => r.run === 'ok')).toMatchObject({status: 'running', run_instance_id: relaunched.run_instance_id})
    expect(actors(home, ['control', 'ok', 'kill']).code).toBe(0)
    expect(actors(home, ['control', 'live', 'stop']).code).toBe(0)
    await waitForResult(live.state_dir)
    runs = listing().runs
    expect(Object.fromEntries(runs.map((r: {run: string; status: string}) => [r.run, r.status]))).toEqual({ok: 'killed', bad: 'failed', live: 'cancelled'})

    // A run.json damaged after it was cached is reported as damaged, never served from the cache.
    actors(home, ['inspect', '--json'])
    const badMeta = join(home, 'runs', 'bad', 'run.json')
    writeFileSync(badMeta, readFileSync(badMeta, 'utf8').replace('"actors-run-v1"', '"something-else"'))
    const damaged = actors(home, ['inspect', '--json']).json
    expect(damaged.runs.map((r: {run: string}) => r.run).sort()).toEqual(['live', 'ok'])
    expect(damaged.damaged).toEqual([expect.objectContaining({state_dir: join(home, 'runs', 'bad')})])

    // Pruned Runs leave the cache too.
    expect(actors(home, ['prune', 'ok', '--json']).code).toBe(0)
    actors(home, ['inspect', '--json'])
    expect(Object.keys(cachedRows()).sort()).toEqual(['live'])
  })

  it('ignores a cache file that is damaged, foreign or lies about a Run, and rebuilds it', async () => {
    const dir = await finished('one', 'true')
    await finished('two', 'false')
    const expected = listing()
    const foreign = ['{not json', JSON.stringify({schema: 'other', rows: []}), '[]', JSON.stringify({schema: 'actors-listing-cache-v3', entries: {}}), JSON.stringify({schema: 'actors-listing-cache-v4', rows: {}})]
    for (const text of foreign) {
      writeFileSync(cacheFile(), text)
      expect(actors(home, ['inspect', '--json']).json).toEqual(expected)
      expect(readJson(cacheFile()).schema).toBe('actors-listing-cache-v4')
      expect(Object.keys(cachedRows()).sort()).toEqual(['one', 'two'])
    }
    // Rows that are damaged, claim a live status, or moved under another Run's id are misses: the state dir is read.
    actors(home, ['inspect', '--json'])
    const cache = readJson(cacheFile())
    const {one: row, two: other} = cachedRows()
    const status = row.indexOf('done')
    for (const lie of [
      [row.slice(0, -1), other],
      [row.map((v, i) => (i === status ? 'running' : v)), other],
      // Each Run's row under the other's id.
      [['one', ...other.slice(1)], ['two', ...row.slice(1)]],
      ['one', 7, null, other],
    ]) {
      writeFileSync(cacheFile(), JSON.stringify({...cache, rows: lie}))
      expect(actors(home, ['inspect', '--json']).json.runs).toEqual([
        expect.objectContaining({run: 'one', status: 'done', state_dir: dir}),
        expect.objectContaining({run: 'two', status: 'failed', state_dir: join(home, 'runs', 'two')}),
      ])
    }
  })

  it('sees an in-place edit that keeps run.json\'s size, whichever way the key was taken', async () => {
    const dir = await finished('kept', 'true')
    const meta = join(dir, 'run.json')
    // Keys taken through statSync (Node's fs binding is not used when it would warn) serve the binding's reader:
    // the second listing hits every row, so the cache file is not rewritten (same inode).
    const viaStatSync = actors(home, ['inspect', '--json'], {env: {NODE_PENDING_DEPRECATION: '1'}})
    expect(viaStatSync.stderr).toBe('')
    const inode = statSync(cacheFile()).ino
    expect(actors(home, ['inspect', '--json']).stdout).toBe(viaStatSync.stdout)
    expect(statSync(cacheFile()).ino).toBe(inode)
    // The same bytes count, written over the file: only its times (and ctime) tell the edit.
    const text = readFileSync(meta, 'utf8')
    expect(text).toContain('"notification": "normal"')
    writeFileSync(meta, text.replace('"notification": "normal"', '"notification": "silent"'))
    expect(statSync(meta).size).toBe(text.length)
    expect(listing().runs).toEqual([expect.objectContaining({run: 'kept', notification: 'silent'})])
  })

  it('prints a cached Run exactly as a freshly read one, field order included', async () => {
    await finished('first', 'true')
    await finished('second', 'sh', '-c', 'exit 3')
    rmSync(cacheFile(), {force: true})
    const fresh = actors(home, ['inspect', '--json'])
    expect(cachedRows()).toHaveProperty('second')
    const cached = actors(home, ['inspect', '--json'])
    expect(cached.stdout).toBe(fresh.stdout)
    expect(fresh.json.runs.map((r: {status: string}) => r.status)).toEqual(['done', 'failed'])
  })
})
