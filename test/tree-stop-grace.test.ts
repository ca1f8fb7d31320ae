/**
 * A tree's stop gives the tree one kill_grace, not one per Run (SPEC:
 * Control; descendants follow a stopped parent): every Run is marked and sent
 * SIGTERM first, then each is waited for, deepest first, until the grace
 * that began with the first signal runs out. Served Run after Run, six
 * TERM-ignoring children took six graces before their parent's own.
 */
import {existsSync} from 'node:fs'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {actors, homeWithRecipes, processAlive, readJson, removeHome, waitFor} from './helpers.js'

let home: string
const CHILDREN = 6

beforeAll(() => {
  // stubborn and boss ignore SIGTERM (the ignore disposition survives exec): only the SIGKILL after kill_grace ends them.
  const stubborn = ['template: [sh, -c, \'trap "" TERM; sleep 300 & wait\']', 'kill_grace: 2s', '']
  // The last child takes a second to leave on SIGTERM: it must be given that second, however late its turn.
  const polite = [
    'template: [sh, -c, \'trap "sleep 1; touch $ACTORS_HOME/polite-left; exit 0" TERM; sleep 300 & wait\']',
    'kill_grace: 2s',
    '',
  ]
  const launches = `for i in $(seq ${CHILDREN - 1}); do actors run stubborn --name s$i >/dev/null; done; actors run polite --name s${CHILDREN} >/dev/null`
  const boss = [`template: [sh, -c, '${launches}; trap "" TERM; sleep 300 & wait']`, 'kill_grace: 2s', '']
  // The state root's recipes/ folder is searched by every launch of the tree.
  ;({home} = homeWithRecipes({
    'stubborn.yaml': stubborn.join('\n'),
    'polite.yaml': polite.join('\n'),
    'boss.yaml': boss.join('\n'),
  }))
})
afterAll(() => removeHome(home))

const runJson = (id: string) => readJson(join(home, 'runs', id, 'run.json'))

describe('stop of a tree', () => {
  it('ends six children (five ignore TERM) and their parent within one shared grace, deepest first; each gets that grace', async () => {
    const launched = actors(home, ['run', 'boss', '--name', 'boss'])
    expect(launched.code, launched.stderr).toBe(0)
    const children = Array.from({length: CHILDREN}, (_, i) => `s${i + 1}`)
    await waitFor(
      () => children.every((id) => runJson(id).child_pid) && runJson('boss').child_pid,
      30_000,
      'every child running its command',
    )
    const pids = children.map((id) => runJson(id).child_pid as number)
    const started = Date.now()
    const stop = actors(home, ['control', 'boss', 'stop', '--json'])
    const took = Date.now() - started
    expect(stop.code, stop.stderr).toBe(0)
    expect(stop.json.status).toBe('cancelled')
    expect(stop.json.descendants, JSON.stringify(stop.json.descendants)).toBeDefined()
    expect([...stop.json.descendants.ended].sort(), JSON.stringify(stop.json.descendants)).toEqual(children)
    expect(stop.json.descendants.errors).toEqual([])
    // One grace of 2 s (TERM is ignored, so it is served in full), not seven of them (14 s).
    expect(took).toBeGreaterThanOrEqual(1900)
    expect(took).toBeLessThan(7000)
    for (const id of children) expect([id, runJson(id).status]).toEqual([id, 'cancelled'])
    for (const pid of pids) expect(processAlive(pid), `pid ${pid}`).toBe(false)
    expect(existsSync(join(home, 'polite-left')), 'the polite child got its grace').toBe(true)
    const ends = children.map((id) => Date.parse(runJson(id).ended_at))
    expect(Math.max(...ends)).toBeLessThanOrEqual(Date.parse(runJson('boss').ended_at))
  })
})
