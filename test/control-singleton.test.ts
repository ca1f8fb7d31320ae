/**
 * Singleton Recipes: a relaunch with equal values returns the running Run
 * (`reused: true`), different values are refused with exit 5 naming the
 * difference, simultaneous launches still make one Run, and once the Run is
 * over a launch starts a new one.
 */
import {readdirSync} from 'node:fs'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {actors, actorsAsync, homeWithRecipes, readJson, waitFor, removeHome} from './helpers.js'

let home: string
let recipes: string

beforeAll(() => {
  ;({home, recipes} = homeWithRecipes({
    'solo.yaml': ['args: [mode=calm, level:int=1]', 'template: [sleep, "300"]', 'singleton: true', ''].join('\n'),
  }))
})
afterAll(() => removeHome(home))

const run = (...args: string[]) => actors(home, ['run', 'solo', '--recipes', recipes, '--json', ...args])

/**
 * Kill a Run once its supervisor has recorded the command (child_pid): a kill
 * that lands while the supervisor is still starting it can miss the command,
 * leaving the Run live.
 */
async function kill(stateDir: string, run: string) {
  await waitFor(() => readJson(join(stateDir, 'run.json')).child_pid, 10_000, `${run} to record its command`)
  return actors(home, ['control', run, 'kill'])
}

describe('singleton', () => {
  it('reuses the live Run for equal values, refuses different ones (exit 5), relaunches after it ended', async () => {
    const launches = await Promise.all(
      [1, 2, 3].map(() => actorsAsync(home, ['run', 'solo', '--recipes', recipes, '--json', 'level=1'])),
    )
    for (const l of launches) expect(l.code, l.stderr).toBe(0)
    const runs = new Set(launches.map((l) => l.json.run))
    expect(runs.size).toBe(1)
    expect(launches.filter((l) => l.json.reused === true).length).toBe(2)
    expect(readdirSync(join(home, 'runs')).filter((name) => !name.startsWith('.')).length).toBe(1)
    const first = launches.find((l) => !l.json.reused)!.json

    const again = run('mode=calm')
    expect(again.code, again.stderr).toBe(0)
    expect(again.json).toMatchObject({
      run: first.run,
      run_instance_id: first.run_instance_id,
      reused: true,
      status: 'running',
    })

    const other = run('mode=loud', 'level=2')
    expect(other.code).toBe(5)
    expect(other.stderr).toContain(`already running as ${first.run}`)
    expect(other.stderr).toContain('mode: running "calm", asked "loud"')
    expect(other.stderr).toContain('level: running 1, asked 2')
    expect(other.json.error.differences.map((d: {name: string}) => d.name)).toEqual(['level', 'mode'])

    expect((await kill(first.state_dir, first.run)).code).toBe(0)
    const fresh = run('mode=loud')
    expect(fresh.code, fresh.stderr).toBe(0)
    expect(fresh.json.reused).toBeUndefined()
    expect(fresh.json.run).not.toBe(first.run)
    expect((await kill(fresh.json.state_dir, fresh.json.run)).code).toBe(0)
  })
})
