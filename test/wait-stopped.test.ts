/**
 * Runs ended by an explicit `control stop|kill` (SPEC: Exit codes, the
 * `wait` paragraph): left out of the rows of a wait that did not name them,
 * still counted and marked reported, and answered by `wait RUN`. The mark is
 * what the kernel's control writes (run.json `ending.asked_from`): a Run
 * that kills itself, or forges a stop in its own Trace, keeps its row.
 */
import {appendFileSync} from 'node:fs'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {renderBatchPlain} from '../src/lib/surface/present/batch-card.js'
import {cardModel} from '../src/lib/services/view-state/card-model.js'
import {actors, homesPerTest, readJson, waitFor} from './helpers.js'

const home = homesPerTest('actors-wait-stopped-')

function launch(h: string, name: string, script: string): void {
  const r = actors(h, ['run', '--name', name, '--', 'sh', '-c', script])
  expect(r.code, r.stderr).toBe(0)
}

const statusOf = (h: string, name: string): string => readJson(join(h, 'runs', name, 'run.json')).status
const rowsOf = (doc: any): string[] => doc.rows.map((row: any) => row.run)

describe('wait: Runs ended by an explicit stop or kill', () => {
  it('are counted and reported but get no row; wait RUN still answers them; a kill left out is no exit 1', async () => {
    const h = home()
    launch(h, 'st1', 'sleep 60')
    launch(h, 'kl1', 'sleep 60')
    launch(h, 'cl1', 'sleep 60')
    launch(h, 'ok1', 'echo fine')
    expect(actors(h, ['control', 'st1', 'stop']).code).toBe(0)
    expect(actors(h, ['control', 'kl1', 'kill']).code).toBe(0)
    // close stops a live Run first, as control stop does.
    expect(actors(h, ['close', 'cl1']).code).toBe(0)
    await waitFor(() => statusOf(h, 'ok1') === 'done', 15_000, 'ok1 to end')
    const r = actors(h, ['wait', '--json', '--timeout', '30s'])
    expect(r.code, r.stderr).toBe(0)
    expect(rowsOf(r.json)).toEqual(['ok1'])
    expect(r.json.counts).toEqual({done: 1, cancelled: 2, killed: 1})
    expect(r.json.members).toBe(4)
    expect(r.json.stopped).toBe(3)
    expect(r.json.stopped_runs.map((s: any) => `${s.run}:${s.status}`).sort()).toEqual([
      'cl1:cancelled',
      'kl1:killed',
      'st1:cancelled',
    ])
    // Both cards say they were delivered without a row.
    expect(renderBatchPlain(r.json)).toMatch(
      /^stopped on request, no row: 3 \(((st1|cl1) cancelled|kl1 killed)(, ((st1|cl1) cancelled|kl1 killed)){2}\)$/m,
    )
    expect(cardModel(r.json).notes).toContainEqual(expect.stringMatching(/^stopped on request, no row: 3 /))
    // Reported: no later wait brings them back.
    const again = actors(h, ['wait', '--json', '--timeout', '0'])
    expect(again.json.members).toBe(0)
    // Naming one asks for it: its row, and a killed one is exit 1 as always.
    const named = actors(h, ['wait', 'kl1', '--json', '--timeout', '5s'])
    expect(named.code).toBe(1)
    expect(rowsOf(named.json)).toEqual(['kl1'])
    expect(named.json.stopped).toBe(0)
  })

  it('descendants stopped with their parent are left out too', async () => {
    const h = home()
    launch(h, 'par', 'actors run --name kid -- sleep 60 >/dev/null; sleep 60')
    await waitFor(() => statusOf(h, 'kid') === 'running', 15_000, 'the child to run')
    const stop = actors(h, ['control', 'par', 'stop', '--json'])
    expect(stop.code, stop.stderr).toBe(0)
    expect(stop.json.descendants.ended).toEqual(['kid'])
    const r = actors(h, ['wait', '--json', '--timeout', '30s'])
    expect(r.code, r.stderr).toBe(0)
    expect(rowsOf(r.json)).toEqual([])
    expect(r.json.stopped_runs.map((s: any) => s.run)).toEqual(['par', 'kid'])
  })

  it('a child whose supervisor is still starting when its parent stops is cancelled too, not lost', async () => {
    const h = home()
    // The child's supervisor sleeps before its start (no SIGTERM handler yet), where the parent's stop reaches it.
    launch(h, 'par', 'ACTORS_TEST_START_DELAY_MS=4000 actors run --name kid -- sleep 60 >/dev/null; sleep 60')
    await waitFor(() => readJson(join(h, 'runs', 'kid', 'run.json')).process_identity, 15_000, 'the child launched')
    const stop = actors(h, ['control', 'par', 'stop', '--json'])
    expect(stop.code, stop.stderr).toBe(0)
    expect(statusOf(h, 'kid')).toBe('cancelled')
    const r = actors(h, ['wait', '--json', '--timeout', '30s'])
    expect(r.code, r.stderr).toBe(0)
    expect(rowsOf(r.json)).toEqual([])
    expect(r.json.stopped_runs.map((s: any) => `${s.run}:${s.status}`)).toEqual(['par:cancelled', 'kid:cancelled'])
  })

  it('a Run that stops or kills itself, or writes a stop into its own Trace, keeps its row', async () => {
    const h = home()
    // From inside its unit the kill takes the caller with it: the Run ends, whatever it is recorded as, with a row.
    launch(h, 'self', 'actors control "$ACTORS_RUN" kill >/dev/null 2>&1; sleep 60')
    launch(h, 'inner', 'sleep 60')
    // A process of the Run's own tree (its verified lineage) asks the kernel to stop it.
    const instance = readJson(join(h, 'runs', 'inner', 'run.json')).run_instance_id
    const lineage = {ACTORS_RUN: 'inner', ACTORS_RUN_INSTANCE: instance, ACTORS_STATE_DIR: join(h, 'runs', 'inner')}
    // It carries the Run's lineage, so the stop's sweep ends it too (its exit code says nothing here).
    actors(h, ['control', 'inner', 'stop'], {env: lineage})
    expect(readJson(join(h, 'runs', 'inner', 'run.json')).ending).toMatchObject({
      status: 'cancelled',
      asked_from: 'inside',
    })
    // A line in the kernel's own form, written straight into the Run's Trace, then a failure.
    const forged = JSON.stringify({id: 'x1', ts: new Date().toISOString(), kind: 'runtime.killed', summary: 'kill'})
    launch(h, 'liar', `printf '%s\\n' '${forged}' >> "$ACTORS_STATE_DIR/trace.jsonl"; exit 3`)
    const ended = (name: string) => ['failed', 'killed', 'cancelled'].includes(statusOf(h, name))
    await waitFor(() => ['self', 'inner', 'liar'].every(ended), 20_000, 'all three to end')
    const r = actors(h, ['wait', '--json', '--timeout', '30s'])
    expect(r.code).toBe(1)
    expect(rowsOf(r.json).sort()).toEqual(['inner', 'liar', 'self'])
    expect(r.json.stopped).toBe(0)
  })

  it('a stopped Run wakes no wait --any while others are live; it comes with a later one', async () => {
    const h = home()
    const gate = join(h, 'go')
    launch(h, 'live', `while [ ! -e "${gate}" ]; do sleep 0.05; done`)
    launch(h, 'st2', 'sleep 60')
    expect(actors(h, ['control', 'st2', 'stop']).code).toBe(0)
    const quiet = actors(h, ['wait', '--any', '--json', '--timeout', '1500ms'])
    expect(quiet.code, quiet.stdout).toBe(124)
    expect(rowsOf(quiet.json)).toEqual([])
    appendFileSync(gate, '')
    const woke = actors(h, ['wait', '--any', '--json', '--timeout', '30s'])
    expect(woke.code, woke.stderr).toBe(0)
    expect(rowsOf(woke.json)).toEqual(['live'])
    expect([...quiet.json.stopped_runs, ...woke.json.stopped_runs].map((s: any) => s.run)).toEqual(['st2'])
  })
})
