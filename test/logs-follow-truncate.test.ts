/**
 * `logs --follow` survives a truncated log: a Run that empties its own
 * stdout.log (`truncate -s 0`) and writes on is followed on; stderr says the
 * log shrank, naming it, once; the later output is shown. So is a log
 * truncated and written past its old size between two looks, or replaced.
 * Real Runs.
 */
import {renameSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {followRunOutput, type LogShrank} from '../src/lib/kernel/runs/logs.js'
import {actors, actorsAsync, homesPerTest, waitFor} from './helpers.js'

const home = homesPerTest('actors-logs-truncate-')

/** Launch `script` (sh) as a Run, return its state dir. */
function launch(h: string, script: string): string {
  const r = actors(h, ['run', '--json', '--', 'sh', '-c', script])
  expect(r.code, r.stderr).toBe(0)
  return r.json.state_dir
}

describe('logs --follow and a truncated log', () => {
  it('says so on stderr, naming the log, and shows what was written after the cut', async () => {
    const h = home()
    const dir = launch(
      h,
      'echo before; sleep 1.5; truncate -s 0 "$ACTORS_STATE_DIR/stdout.log"; sleep 1; echo after-one; echo after-two',
    )
    const r = await actorsAsync(h, ['logs', dir, '--follow'])
    expect(r.code, r.stderr).toBe(0)
    expect(r.stdout).toBe('before\nafter-one\nafter-two\n')
    const notes = r.stderr.split('\n').filter((line) => line.includes('shrank'))
    expect(notes).toEqual([
      `actors: ${join(dir, 'stdout.log')} shrank from 7 to 0 bytes (truncated); following it from its start`,
    ])
  })

  it('under --json, output written right after the cut (before the follower looks) is not lost', async () => {
    const h = home()
    const dir = launch(
      h,
      'echo before-the-cut; sleep 3; truncate -s 0 "$ACTORS_STATE_DIR/stdout.log"; echo after; sleep 0.5',
    )
    const r = await actorsAsync(h, ['logs', dir, '--follow', '--json'])
    expect(r.code, r.stderr).toBe(0)
    const lines = r.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line))
    const text = lines
      .filter((l) => l.type === 'output' && l.stream === 'stdout')
      .map((l) => l.text)
      .join('')
    expect(text).toBe('before-the-cut\nafter\n')
    expect(lines.at(-1)).toMatchObject({type: 'result', status: 'done', exit_code: 0})
    expect(r.stderr).toContain(`${join(dir, 'stdout.log')} shrank from 15 to `)
  })

  it('a log truncated and written past its old size between two looks is followed again from its start', async () => {
    const h = home()
    const dir = launch(
      h,
      // printf, a builtin, writes right after the shell truncates: no look of the follower's comes in between.
      "echo one; sleep 2; printf 'TWO\\nTHREE\\n' > $ACTORS_STATE_DIR/stdout.log; sleep 2; echo four",
    )
    const r = await actorsAsync(h, ['logs', dir, '--follow'])
    expect(r.code, r.stderr).toBe(0)
    expect(r.stdout).toBe('one\nTWO\nTHREE\nfour\n')
    expect(r.stderr).toContain(`actors: ${join(dir, 'stdout.log')} `)
    expect(r.stderr).toContain('following it from its start')
  })

  it('between two looks, exactly: rewritten longer, rewritten the same size, replaced; each said and read from the start', async () => {
    const h = home()
    const dir = launch(h, 'echo one; sleep 30')
    const log = join(dir, 'stdout.log')
    await waitFor(() => actors(h, ['logs', dir]).stdout === 'one\n', 10_000, 'the first line')
    const cuts: LogShrank[] = []
    const stop = new AbortController()
    const follow = followRunOutput(dir, ['stdout'], true, stop.signal, (cut) => cuts.push(cut))
    try {
      expect((await follow.next()).value).toMatchObject({text: 'one\n'})
      // The follower is held at its yield: nothing it can look at in between, whatever the machine's speed.
      writeFileSync(log, 'TWO\nTHREE\n')
      expect((await follow.next()).value).toMatchObject({text: 'TWO\nTHREE\n'})
      expect(cuts).toEqual([{file: log, read: 4, size: 10, how: 'rewritten'}])
      writeFileSync(log, 'ABC\nDEFGH\n')
      expect((await follow.next()).value).toMatchObject({text: 'ABC\nDEFGH\n'})
      expect(cuts.at(-1)).toEqual({file: log, read: 10, size: 10, how: 'rewritten'})
      writeFileSync(`${log}.new`, 'ABC\nDEFGH\nnew\n')
      renameSync(`${log}.new`, log)
      expect((await follow.next()).value).toMatchObject({text: 'ABC\nDEFGH\nnew\n'})
      expect(cuts.at(-1)).toEqual({file: log, read: 10, size: 14, how: 'replaced'})
      expect(cuts).toHaveLength(3)
    } finally {
      stop.abort()
      await follow.return(undefined)
      actors(h, ['control', dir, 'kill'])
    }
  })

  // Red-team 14 N4-L1: a Run that removed or moved its state dir ended the follow with exit 0 and a word of a
  // truncated log, while its command ran on.
  for (const [what, act] of [
    ['removes', 'rm -rf "$ACTORS_STATE_DIR"'],
    ['moves', 'mv "$ACTORS_STATE_DIR" "$ACTORS_STATE_DIR.moved"'],
  ])
    it(`a Run that ${what} its state dir: the follow says the dir is gone, exit 4`, async () => {
      const h = home()
      const dir = launch(h, `echo before; sleep 1; ${act}; sleep 3`)
      const r = await actorsAsync(h, ['logs', dir, '--follow'])
      expect(r.code, r.stderr).toBe(4)
      expect(r.stdout).toBe('before\n')
      expect(r.stderr).toContain(`actors: ${dir} is gone (removed or moved) while it was followed`)
      expect(r.stderr).not.toContain('truncated')
    })
})
