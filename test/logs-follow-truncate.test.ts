/**
 * `logs --follow` survives a truncated log: a Run that empties its own
 * stdout.log (`truncate -s 0`) and writes on is followed on; stderr says the
 * log shrank, naming it, once; the later output is shown. Real Runs.
 */
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {actors, actorsAsync, homesPerTest} from './helpers.js'

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
})
