/**
 * A Run that swaps its state dir for a link to another Run's dir as it ends
 * must not have its end written there, nor that Run's unit ended as its own
 * (issue 35, red-team pass: the supervisor wrote "done, exit 0" into the
 * other Run's result.json and killed it).
 */
import {existsSync} from 'node:fs'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {actors, homesPerTest, processAlive, readJson, waitFor} from './helpers.js'

const home = homesPerTest('actors-swap-')

describe('a state dir swapped for a link to another Run', () => {
  it('leaves the other Run running, its result unwritten, when the swapping Run ends', async () => {
    const h = home()
    expect(actors(h, ['run', '--name', 'w', '--', 'sleep', '60']).code).toBe(0)
    const w = join(h, 'runs', 'w')
    const child = await waitFor(() => readJson(join(w, 'run.json')).child_pid as number, 10_000, "w's command")
    const swap = 'd="$ACTORS_STATE_DIR"; mv "$d" "$d.moved"; ln -s "$(dirname "$d")/w" "$d"; sleep 1; exit 0'
    // A supervisor of its own, whose exit shows v's end (the state root's host would go on supervising w).
    expect(actors(h, ['run', '--name', 'v', '--', 'sh', '-c', swap], {env: {ACTORS_SUPERVISION: 'run'}}).code).toBe(0)
    // v's end: its supervisor is gone once the moved dir has no live supervisor pid.
    const moved = join(h, 'runs', 'v.moved')
    await waitFor(
      () => existsSync(moved) && !processAlive(readJson(join(moved, 'run.json')).pid),
      15_000,
      "v's supervisor to end",
    )
    expect(existsSync(join(w, 'result.json'))).toBe(false)
    expect(processAlive(child)).toBe(true)
    expect(readJson(join(w, 'run.json')).status).toBe('running')
    actors(h, ['control', 'w', 'kill'])
  })

  // Red-team 14 N4-L2: with its own dir moved out of runs/, a supervisor wrote its end into whatever dir carried a
  // copy of its run.json: a finished neighbour's, whose own end was lost.
  it("writes no end into a finished neighbour's dir that a moved-out Run copied its run.json into", async () => {
    const h = home()
    const q = actors(h, ['run', '--name', 'q', '--json', '--', 'sh', '-c', 'exit 5'])
    await waitFor(() => existsSync(join(q.json.state_dir, 'result.json')), 15_000, "q's end")
    const copy =
      'd="$ACTORS_STATE_DIR"; sleep 0.5; mv "$d" "$(dirname "$(dirname "$d")")/p-moved"; cp "$(dirname "$(dirname "$d")")/p-moved/run.json" "$(dirname "$d")/q/run.json"; exit 3'
    const p = actors(h, ['run', '--name', 'p', '--json', '--', 'sh', '-c', copy])
    expect(p.code, p.stderr).toBe(0)
    const moved = join(h, 'p-moved')
    await waitFor(
      () => existsSync(join(moved, 'run.json')) && !processAlive(readJson(join(moved, 'run.json')).pid),
      15_000,
      "p's supervisor to end",
    )
    expect(readJson(join(q.json.state_dir, 'result.json'))).toMatchObject({status: 'failed', exit_code: 5})
  })
})
