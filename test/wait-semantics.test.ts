/**
 * Batch semantics of `wait` (SPEC: the `wait` paragraph of Commands,
 * Completion batches, Budget crossing): terminal kinds never carry
 * attention, `run --wait` blocks until the end, naming a Run asks for it
 * again, and a budget crossing shows wherever the Run's end does.
 */
import {existsSync, readFileSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {actors, homesPerTest, readJson, waitFor, waitForResult} from './helpers.js'

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

  it('run --wait blocks until the Run ends; attention raised on the way comes with the batch', () => {
    const h = home()
    const started = Date.now()
    const script = 'sleep 1; actors emit x.q --summary asking --attention followup >/dev/null; sleep 3; echo over'
    const r = actors(h, ['run', '--name', 'rw', '--wait', '--json', '--', 'bash', '-c', script])
    expect(r.code, r.stderr).toBe(0)
    expect(Date.now() - started).toBeGreaterThanOrEqual(4000)
    expect(r.json.rows).toHaveLength(1)
    expect(r.json.rows[0]).toMatchObject({run: 'rw', status: 'done', output: 'over\n'})
    expect(r.json.attention.map((a: any) => a.kind)).toEqual(['x.q'])
    expect(readJson(join(h, 'runs', 'rw', 'run.json')).status).toBe('done')
  })

  it("wait RUN answers with RUN's row even when an earlier wait reported it", async () => {
    const h = home()
    expect(actors(h, ['run', '--name', 'wa1', '--', 'sh', '-c', 'echo first-out']).code).toBe(0)
    await waitForResult(join(h, 'runs', 'wa1'))
    const first = actors(h, ['wait', '--json'])
    expect(first.json.rows.map((row: any) => row.run)).toEqual(['wa1'])
    for (let ask = 0; ask < 2; ask++) {
      const again = actors(h, ['wait', 'wa1', '--json', '--timeout', '10s'])
      expect(again.code, again.stderr).toBe(0)
      expect(again.json.rows).toHaveLength(1)
      expect(again.json.rows[0]).toMatchObject({run: 'wa1', status: 'done', output: 'first-out\n'})
      expect(again.json.already_reported).toEqual(['wa1'])
    }
    // Asked by name only: a plain wait still never repeats it.
    expect(actors(h, ['wait', '--json']).json.rows).toEqual([])
  })

  it("a budget crossing shows in the row, the card, inspect and the parent's runtime.child_ended (with usage)", async () => {
    const h = home()
    expect(
      actors(h, ['run', '--name', 'b1', '--budget-tokens', '100', '--', 'actors', 'emit', 'usage', '--tokens', '150'])
        .code,
    ).toBe(0)
    await waitForResult(join(h, 'runs', 'b1'))
    const batch = actors(h, ['wait', '--json'])
    expect(batch.json.rows[0]).toMatchObject({run: 'b1', status: 'done', budget_exceeded: true, usage: {tokens: 150}})
    expect(actors(h, ['wait', 'b1']).stdout).toMatch(/b1 .*budget exceeded/)
    expect(actors(h, ['inspect', 'b1']).stdout).toMatch(/budget: +exceeded: 150 of 100 tokens \(tree b1\)/)
    expect(actors(h, ['inspect', 'b1', '--json']).json.result).toMatchObject({budget_exceeded: true})
    // A child that takes its tree past the budget: its parent's Trace says so, with the child's usage.
    const script =
      'actors run --name kid -- actors emit usage --tokens 150 >/dev/null; while [ ! -e "$ACTORS_HOME/runs/kid/result.json" ]; do sleep 0.05; done'
    expect(actors(h, ['run', '--name', 'top', '--budget-tokens', '100', '--', 'sh', '-c', script]).code).toBe(0)
    await waitForResult(join(h, 'runs', 'top'))
    const childEnded = () =>
      readFileSync(join(h, 'runs', 'top', 'trace.jsonl'), 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line))
        .filter((e) => e.kind === 'runtime.child_ended')
    // Written by whoever settles the child, maybe just after the parent ended.
    const ended = await waitFor(() => childEnded().length > 0 && childEnded(), 15_000, 'runtime.child_ended')
    expect(ended.map((e) => e.data)).toEqual([
      expect.objectContaining({
        run: 'kid',
        status: 'done',
        budget_exceeded: true,
        usage: expect.objectContaining({tokens: 150}),
      }),
    ])
    const rows = actors(h, ['wait', 'top', '--json']).json.rows
    expect(rows.map((row: any) => [row.run, row.budget_exceeded])).toEqual([
      ['top', false],
      ['kid', true],
    ])
  })
})
