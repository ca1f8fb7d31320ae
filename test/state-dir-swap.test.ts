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
    expect(actors(h, ['run', '--name', 'v', '--', 'sh', '-c', swap]).code).toBe(0)
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
})
