/**
 * A parent's Trace records its children's lives (SPEC: Trees, owners and
 * limits): runtime.child_started / runtime.child_ended with {run,
 * run_instance_id, status, exit_code}, for launched, queued and adopted
 * children, in the parent's current generation's Trace.
 */
import {readFileSync} from 'node:fs'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {actors, homesPerTest, readJson, waitFor, waitForResult} from './helpers.js'

const home = homesPerTest('actors-child-events-')

interface Event {
  kind: string
  run_instance_id?: string
  data: {run: string; run_instance_id: string; status: string; exit_code: number | null; adopted?: boolean}
}

function childEvents(h: string, run: string): Event[] {
  return readFileSync(join(h, 'runs', run, 'trace.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line))
    .filter((e) => e.kind === 'runtime.child_started' || e.kind === 'runtime.child_ended')
}

describe("children in the parent's Trace", () => {
  it('records a started, a queued and an ended child with status and exit code; inspect PARENT shows them', async () => {
    const h = home()
    const script =
      'actors run --name k1 -- sh -c "sleep 0.5; exit 3" >/dev/null; actors run --name k2 -- true >/dev/null; actors wait k1 k2 >/dev/null; true'
    expect(actors(h, ['run', '--name', 'par', '--max-parallel', '1', '--', 'sh', '-c', script]).code).toBe(0)
    await waitForResult(join(h, 'runs', 'par'))
    const par = readJson(join(h, 'runs', 'par', 'run.json'))
    const k1 = readJson(join(h, 'runs', 'k1', 'run.json'))
    const k2 = readJson(join(h, 'runs', 'k2', 'run.json'))
    const events = childEvents(h, 'par')
    expect(events.map((e) => [e.kind, e.data.run])).toEqual(
      expect.arrayContaining([
        ['runtime.child_started', 'k1'],
        ['runtime.child_started', 'k2'],
        ['runtime.child_ended', 'k1'],
        ['runtime.child_ended', 'k2'],
      ]),
    )
    expect(events.find((e) => e.kind === 'runtime.child_started' && e.data.run === 'k1')!.data).toMatchObject({
      run_instance_id: k1.run_instance_id,
      status: 'running',
      exit_code: null,
    })
    // k2 waited behind --max-parallel 1.
    expect(events.find((e) => e.kind === 'runtime.child_started' && e.data.run === 'k2')!.data).toMatchObject({
      run_instance_id: k2.run_instance_id,
      status: 'queued',
    })
    expect(events.find((e) => e.kind === 'runtime.child_ended' && e.data.run === 'k1')!.data).toMatchObject({
      run_instance_id: k1.run_instance_id,
      status: 'failed',
      exit_code: 3,
    })
    expect(events.find((e) => e.kind === 'runtime.child_ended' && e.data.run === 'k2')!.data).toMatchObject({
      status: 'done',
      exit_code: 0,
    })
    for (const e of events) expect(e.run_instance_id).toBe(par.run_instance_id)
    const inspected = actors(h, ['inspect', 'par', '--json']).json
    expect(inspected.trace.map((e: Event) => e.kind)).toEqual(
      expect.arrayContaining(['runtime.child_started', 'runtime.child_ended']),
    )
  })

  it("a queued child cancelled with its parent ends in the parent's Trace (cancelled, never started)", async () => {
    const h = home()
    const script =
      'actors run --name run1 -- sleep 300 >/dev/null; actors run --name queued1 -- sleep 300 >/dev/null; sleep 300'
    expect(actors(h, ['run', '--name', 'par', '--max-parallel', '1', '--', 'sh', '-c', script]).code).toBe(0)
    // queued1 waits behind --max-parallel 1 while run1 holds the slot.
    await waitFor(
      () => readJson(join(h, 'runs', 'queued1', 'run.json')).status === 'queued',
      15_000,
      'queued1 to be queued',
    )
    expect(actors(h, ['control', 'par', 'stop']).code).toBe(0)
    await waitForResult(join(h, 'runs', 'par'))
    const queued = await waitForResult(join(h, 'runs', 'queued1'))
    expect(queued.status).toBe('cancelled')
    const ended = await waitFor(
      () => {
        const found = childEvents(h, 'par').filter((e) => e.kind === 'runtime.child_ended')
        return found.length === 2 && found
      },
      15_000,
      "both children's child_ended in par's Trace",
    )
    expect(ended.map((e) => [e.data.run, e.data.status]).sort()).toEqual([
      ['queued1', 'cancelled'],
      ['run1', 'cancelled'],
    ])
    const queuedEnd = ended.find((e) => e.data.run === 'queued1')!
    expect(queuedEnd.data).toMatchObject({
      run_instance_id: readJson(join(h, 'runs', 'queued1', 'run.json')).run_instance_id,
      exit_code: null,
    })
  })

  it("an adopted child and a child of an earlier generation end in the current generation's Trace", async () => {
    const h = home()
    // Generation 1 of boss leaves a live child behind.
    expect(
      actors(h, ['run', '--name', 'boss', '--', 'sh', '-c', 'actors run --name worker -- sleep 300 >/dev/null']).code,
    ).toBe(0)
    await waitForResult(join(h, 'runs', 'boss'))
    expect(childEvents(h, 'boss').map((e) => e.kind)).toEqual(['runtime.child_started'])
    // Generation 2 adopts it; a top-level Run is adopted by `actors adopt` too.
    const relaunch = actors(h, ['run', '--name', 'boss', '--', 'sleep', '300'])
    expect(relaunch.code, relaunch.stderr).toBe(0)
    expect(actors(h, ['run', '--name', 'solo', '--', 'sleep', '300']).code).toBe(0)
    const boss2 = await waitFor(
      () => {
        const meta = readJson(join(h, 'runs', 'boss', 'run.json'))
        return meta.generation === 2 && meta.status === 'running' && meta
      },
      15_000,
      'boss generation 2 running',
    )
    expect(actors(h, ['adopt', 'solo', '--parent', 'boss']).code).toBe(0)
    const started = childEvents(h, 'boss').filter((e) => e.kind === 'runtime.child_started')
    expect(started.map((e) => [e.data.run, e.data.adopted])).toEqual(
      expect.arrayContaining([
        ['worker', true],
        ['solo', true],
      ]),
    )

    expect(actors(h, ['control', 'worker', 'stop']).code).toBe(0)
    expect(actors(h, ['control', 'solo', 'kill']).code).toBe(0)
    await waitFor(
      () => childEvents(h, 'boss').filter((e) => e.kind === 'runtime.child_ended').length === 2,
      15_000,
      'two child_ended events',
    )
    const ended = childEvents(h, 'boss').filter((e) => e.kind === 'runtime.child_ended')
    expect(ended.map((e) => [e.data.run, e.data.status])).toEqual(
      expect.arrayContaining([
        ['worker', 'cancelled'],
        ['solo', 'killed'],
      ]),
    )
    for (const e of ended) expect(e.run_instance_id).toBe(boss2.run_instance_id)
    // Generation 1's archived Trace got nothing after its end.
    const old = readFileSync(join(h, 'runs', 'boss', 'generations', '1', 'trace.jsonl'), 'utf8')
    expect(old).not.toContain('runtime.child_ended')
    expect(actors(h, ['control', 'boss', 'stop']).code).toBe(0)
  })
})
