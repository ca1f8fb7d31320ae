/**
 * Which output goes where (SPEC "Commands" and "Resource locks"): `logs
 * --follow` follows both streams like `run --follow`, an empty log tails to
 * nothing, and `lock exec --json` keeps stdout for its one JSON document.
 */
import {describe, expect, it} from 'vitest'
import {actors, homesPerTest} from './helpers.js'

const home = homesPerTest('actors-streams-')

describe('logs', () => {
  it('--follow shows stdout on stdout and stderr on stderr; --tail of an empty log prints nothing', () => {
    const h = home()
    expect(actors(h, ['run', '--name', 'both', '--wait', '--', 'sh', '-c', 'echo to-out; echo to-err >&2']).code).toBe(
      0,
    )
    const follow = actors(h, ['logs', 'both', '--follow'])
    expect(follow.code).toBe(0)
    expect(follow.stdout).toBe('to-out\n')
    expect(follow.stderr).toContain('to-err\n')
    const onlyErr = actors(h, ['logs', 'both', '--follow', '--stderr'])
    expect(onlyErr.stdout).toBe('to-err\n')
    expect(actors(h, ['run', '--name', 'quiet', '--wait', '--', 'true']).code).toBe(0)
    const empty = actors(h, ['logs', 'quiet', '--tail', '50'])
    expect(empty.code).toBe(0)
    expect(empty.stdout).toBe('')
    expect(actors(h, ['logs', 'both', '--tail', '50']).stdout).toBe('to-out\n')
  }, 60_000)
})

describe('lock exec --json', () => {
  it("sends COMMAND's stdout to stderr so stdout is one JSON document", () => {
    const h = home()
    const r = actors(h, [
      'lock',
      'exec',
      'L',
      '--json',
      '--',
      'sh',
      '-c',
      'echo command-out; echo command-err >&2; exit 3',
    ])
    expect(r.code).toBe(3)
    expect(r.json).toMatchObject({lock: {lock: 'L'}, exit_code: 3})
    expect(r.stdout).not.toContain('command-out')
    expect(r.stderr).toContain('command-out\n')
    expect(r.stderr).toContain('command-err\n')
    // Without --json the command keeps the terminal's stdout.
    expect(actors(h, ['lock', 'exec', 'L', '--', 'echo', 'plain']).stdout).toBe('plain\n')
  }, 30_000)
})
