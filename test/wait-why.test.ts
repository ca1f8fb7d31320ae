/**
 * `wait` says what it waits for (SPEC: Commands, `wait`): piped, one stderr
 * line names each waited-for Run that something holds back and what (its
 * parent's --max-parallel, a lock, a pause), so a wait that cannot progress
 * is never silent; the same reason reaches the live view and `--json`'s
 * pending rows. Real Runs.
 */
import {existsSync} from 'node:fs'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {pendingWhy} from '../src/lib/kernel/executors/index.js'
import {actors, homesPerTest, homeWithRecipes, removeHome, waitFor} from './helpers.js'

const home = homesPerTest('actors-wait-why-')

describe('wait says what holds a Run back', () => {
  it("names a child queued behind its parent's --max-parallel, and a paused Run", async () => {
    const h = home()
    const gate = join(h, 'gate')
    const child = (name: string) => `actors run --name ${name} -- sh -c 'while [ ! -e ${gate} ]; do sleep 0.05; done'`
    const script = `${child('c1')} >/dev/null; ${child('c2')} >/dev/null; while [ ! -e ${gate} ]; do sleep 0.05; done`
    expect(actors(h, ['run', '--name', 'coord', '--max-parallel', '1', '--', 'sh', '-c', script]).code).toBe(0)
    await waitFor(() => existsSync(join(h, 'runs', 'c2')) || undefined, 20_000, 'c2 to be queued')
    const queued = actors(h, ['wait', 'c2', '--timeout', '1s'])
    expect(queued.code).toBe(124)
    expect(queued.stderr).toContain("actors: waiting for 1 Run; held back: c2 (queued behind coord's --max-parallel)")
    // --json: the same in the batch's pending rows.
    const json = actors(h, ['wait', 'c2', '--json', '--timeout', '1s']).json
    expect(json.pending).toEqual([expect.objectContaining({run: 'c2', why: "queued behind coord's --max-parallel"})])
    expect(actors(h, ['control', 'c1', 'pause']).code).toBe(0)
    const paused = actors(h, ['wait', 'c1', 'c2', '--timeout', '1s'])
    expect(paused.stderr).toMatch(/held back: .*c1 \(paused\)/)
    // A Run that is simply running holds nothing back: no line.
    expect(actors(h, ['control', 'c1', 'resume']).code).toBe(0)
    expect(actors(h, ['run', '--name', 'solo', '--', 'sleep', '30']).code).toBe(0)
    expect(actors(h, ['wait', 'solo', '--timeout', '1s']).stderr).not.toContain('held back')
  }, 60_000)

  it('names the lock a queued Run waits for', async () => {
    const {home: h, recipes} = homeWithRecipes({'locked.yaml': 'locks: [db]\ntemplate: [true]\n'})
    try {
      expect(actors(h, ['lock', 'acquire', 'db', '--holder', 'someone', '--lease', '5m']).code).toBe(0)
      expect(actors(h, ['run', 'locked', '--name', 'l1'], {env: {ACTORS_RECIPES: recipes}}).code).toBe(0)
      const r = actors(h, ['wait', 'l1', '--timeout', '1s'])
      expect(r.code).toBe(124)
      expect(r.stderr).toContain('held back: l1 (waiting for lock db)')
      const json = actors(h, ['wait', 'l1', '--json', '--timeout', '1s']).json
      expect(json.pending).toEqual([expect.objectContaining({run: 'l1', why: 'waiting for lock db'})])
    } finally {
      removeHome(h)
    }
  }, 60_000)

  it('says a pending job in its engine words, and nothing for a running Run', () => {
    expect(pendingWhy({status: 'running'})).toBeUndefined()
    expect(pendingWhy({status: 'running', frozen: true})).toBe('paused with its parent')
    expect(pendingWhy({status: 'queued', executor: 'slurm', job_id: null, parent: null})).toBe(
      'not submitted to Slurm yet',
    )
    expect(pendingWhy({status: 'queued', executor: 'slurm', job_id: null, parent: 'p'})).toBe(
      "queued behind p's --max-parallel",
    )
  })
})
