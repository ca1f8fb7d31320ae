/**
 * `actors close RUN` (SPEC: Generations and steering): a live Run is stopped
 * first, the id is then closed; new generations and adoption of it are
 * refused (exit 5), reading it still works, prune may remove it, closing
 * twice changes nothing.
 */
import {existsSync, readFileSync} from 'node:fs'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {actors, homesPerTest, processAlive, readJson, waitFor, waitForResult} from './helpers.js'

const home = homesPerTest('actors-close-')

describe('actors close', () => {
  it('stops a live Run (as control stop), marks it closed, and refuses send, rerun, run --name and adopt with exit 5', async () => {
    const h = home()
    expect(actors(h, ['run', '--name', 'w', '--', 'sh', '-c', 'echo working; sleep 30']).code).toBe(0)
    const dir = join(h, 'runs', 'w')
    // The command's pid: the supervisor may be the state root's host, which goes on.
    const pid = await waitFor(() => readJson(join(dir, 'run.json')).child_pid as number, 10_000, "w's command")
    const closed = actors(h, ['close', 'w', '--json'])
    expect(closed.code).toBe(0)
    expect(closed.json).toMatchObject({
      run: 'w',
      generation: 1,
      closed: true,
      stopped: true,
      status: 'cancelled',
      already_closed: false,
    })
    const result = await waitForResult(dir)
    expect(result.status).toBe('cancelled')
    expect(processAlive(pid)).toBe(false)
    const meta = readJson(join(dir, 'run.json'))
    expect(meta).toMatchObject({closed: true, closed_at: closed.json.closed_at})

    // Closing twice: exit 0, run.json unchanged.
    const before = readFileSync(join(dir, 'run.json'), 'utf8')
    const again = actors(h, ['close', 'w', '--json'])
    expect(again.code).toBe(0)
    expect(again.json).toMatchObject({closed_at: closed.json.closed_at, already_closed: true, stopped: false})
    expect(readFileSync(join(dir, 'run.json'), 'utf8')).toBe(before)

    for (const args of [
      ['send', 'w', 'more', '--json'],
      ['rerun', 'w', '--json'],
      ['run', '--json', '--name', 'w', '--', 'echo', 'again'],
    ]) {
      const refused = actors(h, args)
      expect(refused.code, args.join(' ')).toBe(5)
      expect(refused.json.error.message).toBe('w is closed; start a new Run')
    }
    expect(actors(h, ['run', '--name', 'coord', '--', 'sleep', '20']).code).toBe(0)
    const adopt = actors(h, ['adopt', 'w', '--parent', 'coord'])
    expect(adopt.code).toBe(5)
    expect(adopt.stderr).toContain('w is closed; start a new Run')
    expect(readJson(join(dir, 'run.json')).generation ?? 1).toBe(1)
    expect(existsSync(join(dir, 'generations'))).toBe(false)

    // Reading still works; prune may remove it.
    expect(actors(h, ['inspect', 'w']).code).toBe(0)
    expect(actors(h, ['logs', 'w']).stdout).toBe('working\n')
    expect(actors(h, ['close', 'coord']).code).toBe(0)
    expect(actors(h, ['prune', 'w']).code).toBe(0)
    expect(existsSync(dir)).toBe(false)
  })

  it('closes a finished Run without stopping anything; an unknown Run is exit 4', async () => {
    const h = home()
    expect(actors(h, ['run', '--name', 'done1', '--', 'true']).code).toBe(0)
    await waitForResult(join(h, 'runs', 'done1'))
    const closed = actors(h, ['close', 'done1', '--json'])
    expect(closed.code).toBe(0)
    expect(closed.json).toMatchObject({closed: true, stopped: false, status: 'done'})
    expect(actors(h, ['close', 'nobody']).code).toBe(4)
  })
})
