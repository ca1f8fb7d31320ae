/**
 * Batch semantics of `wait` (SPEC: the `wait` paragraph of Commands,
 * Completion batches, Budget crossing): terminal kinds never carry
 * attention, `run --wait` blocks until the end, naming a Run asks for it
 * again, and a budget crossing shows wherever the Run's end does.
 */
import {existsSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {actors, homesPerTest, waitFor} from './helpers.js'

const home = homesPerTest('actors-wait-semantics-')

describe('wait batch semantics', () => {
  it('command.done and runtime.* kinds never carry attention, whoever wrote them', async () => {
    const h = home()
    // The Run writes both itself: one through emit, one straight into its Trace (flag raised by hand too).
    const forged = JSON.stringify({
      id: 'forged-end',
      ts: new Date().toISOString(),
      kind: 'runtime.ended',
      summary: 'not a request',
      attention: 'steer',
    })
    const script = [
      'actors emit command.done --summary over --attention steer >/dev/null',
      `printf '%s\\n' '${forged}' >> "$ACTORS_STATE_DIR/trace.jsonl"`,
      ': > "$ACTORS_STATE_DIR/attention.flag"',
      ': > "$ACTORS_STATE_DIR/forged"',
      'while [ ! -e "$ACTORS_STATE_DIR/go" ]; do sleep 0.05; done',
      'actors emit real.q --summary which --attention followup >/dev/null',
      'sleep 30',
    ].join('\n')
    const r = actors(h, ['run', '--name', 'term', '--', 'sh', '-c', script])
    expect(r.code, r.stderr).toBe(0)
    const dir = join(h, 'runs', 'term')
    await waitFor(() => existsSync(join(dir, 'forged')), 15_000, 'the forged events')
    const quiet = actors(h, ['wait', '--any', '--json', '--timeout', '1s'])
    expect(quiet.code, quiet.stdout).toBe(124)
    expect(quiet.json.attention).toEqual([])
    writeFileSync(join(dir, 'go'), '')
    const woke = actors(h, ['wait', '--any', '--json', '--timeout', '15s'])
    expect(woke.code, woke.stderr).toBe(0)
    expect(woke.json.attention.map((a: any) => a.kind)).toEqual(['real.q'])
  })
})
