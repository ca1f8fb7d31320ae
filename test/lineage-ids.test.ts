/**
 * Lineage ids (SPEC: Trees, owners and limits): a child launched inside a Run
 * without --name is PARENT.N, N counting the parent's children from 1 across
 * its generations, a taken id moving on to the next N; --name still wins.
 * Real `actors run` calls inside real Runs (the supervisor puts bin/ on PATH).
 */
import {mkdirSync, readdirSync, rmSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {nextLineageId} from '../src/lib/services/launch/lineage-id.js'
import {actors, homesPerTest, readJson, waitForResult} from './helpers.js'

const home = homesPerTest('actors-lineage-ids-')

const quiet = (command: string) => `actors run -- ${command} >/dev/null`

describe('lineage ids', () => {
  it('names unnamed children PARENT.1.., continues the count in a next generation, skips a taken id', async () => {
    const h = home()
    // Generation 1: three unnamed children; the first launches one of its own.
    const first = [`actors run -- sh -c '${quiet('true')}' >/dev/null`, quiet('true'), quiet('true')].join('; ')
    const gen1 = actors(h, ['run', '--name', 'par', '--json', '--', 'sh', '-c', first])
    expect(gen1.code, gen1.stderr).toBe(0)
    await waitForResult(join(h, 'runs', 'par'))
    for (const id of ['par.1', 'par.2', 'par.3', 'par.1.1']) await waitForResult(join(h, 'runs', id))
    const par = readJson(join(h, 'runs', 'par', 'run.json'))
    for (const id of ['par.1', 'par.2', 'par.3'])
      expect(readJson(join(h, 'runs', id, 'run.json')).parent).toMatchObject({
        run: 'par',
        run_instance_id: par.run_instance_id,
      })
    expect(readJson(join(h, 'runs', 'par.1.1', 'run.json')).parent.run).toBe('par.1')
    // Ids with dots work where ids are read: inspect, RUN@N, logs, the tree, wait.
    const inspected = actors(h, ['inspect', 'par.2', '--json'])
    expect(inspected.code, inspected.stderr).toBe(0)
    expect(inspected.json).toMatchObject({run: 'par.2', status: 'done'})
    const generation = actors(h, ['inspect', 'par.2@1', '--json'])
    expect(generation.code, generation.stderr).toBe(0)
    expect(generation.json).toMatchObject({run: 'par.2', generation: 1})
    expect(actors(h, ['inspect', 'par@1', '--json']).json.run_instance_id).toBe(par.run_instance_id)
    expect(actors(h, ['logs', 'par.1.1@1']).code).toBe(0)
    // A child removed since (as prune does) still counted: its N is never given again.
    rmSync(join(h, 'runs', 'par.3'), {recursive: true})

    // par.4 is taken by a top-level Run: the next generation's first unnamed child moves on to par.5.
    const squatter = actors(h, ['run', '--name', 'par.4', '--json', '--', 'true'])
    expect(squatter.code, squatter.stderr).toBe(0)
    await waitForResult(join(h, 'runs', 'par.4'))
    const second = [quiet('true'), 'actors run --name kid -- true >/dev/null'].join('; ')
    const gen2 = actors(h, ['run', '--name', 'par', '--json', '--', 'sh', '-c', second])
    expect(gen2.code, gen2.stderr).toBe(0)
    expect(gen2.json.generation).toBe(2)
    await waitForResult(join(h, 'runs', 'kid'))
    await waitForResult(join(h, 'runs', 'par.5'))
    const gen2Meta = readJson(join(h, 'runs', 'par', 'run.json'))
    expect(readJson(join(h, 'runs', 'par.5', 'run.json')).parent.run_instance_id).toBe(gen2Meta.run_instance_id)
    expect(readJson(join(h, 'runs', 'kid', 'run.json')).parent.run).toBe('par')
    expect(readJson(join(h, 'runs', 'par.4', 'run.json')).parent).toBeUndefined()
    expect(
      readdirSync(join(h, 'runs'))
        .filter((f) => !f.startsWith('.'))
        .sort(),
    ).toEqual(['kid', 'par', 'par.1', 'par.1.1', 'par.2', 'par.4', 'par.5'].sort())

    const tree = actors(h, ['inspect', '--tree', 'par', '--json'])
    const kids = tree.json.forest[0].children.map((n: {run: string}) => n.run)
    expect(kids).toEqual(expect.arrayContaining(['par.1', 'par.2', 'par.5', 'kid']))
    const waited = actors(h, ['wait', 'par.1.1', '--json'])
    expect(waited.code, waited.stderr).toBe(0)
    expect(JSON.stringify(waited.json)).toContain('"par.1.1"')
  })

  it('gives siblings launched at the same moment distinct ids, PARENT.1 to PARENT.N without gaps', async () => {
    const h = home()
    const fan = 'for i in 1 2 3 4; do actors run -- true >/dev/null & done; wait'
    const r = actors(h, ['run', '--name', 'fan', '--json', '--', 'sh', '-c', fan])
    expect(r.code, r.stderr).toBe(0)
    await waitForResult(join(h, 'runs', 'fan'))
    const ids = ['fan.1', 'fan.2', 'fan.3', 'fan.4']
    for (const id of ids) await waitForResult(join(h, 'runs', id))
    expect(
      readdirSync(join(h, 'runs'))
        .filter((f) => f.startsWith('fan.'))
        .sort(),
    ).toEqual(ids)
    const status = actors(h, ['inspect', 'fan', '--json']).json
    expect(status.status, JSON.stringify(status)).toBe('done')
  })

  it('counts each journaled child once, moves past a taken N, and gives up on an id too long to be one', () => {
    const dir = join(home(), 'p')
    mkdirSync(dir)
    const parent = {run: 'p', run_instance_id: 'i', state_dir: dir}
    expect(nextLineageId(parent)).toEqual({id: 'p.1', n: 1})
    // A named child counts; a child launched again (its next generation) is journaled twice and counts once.
    const line = (run: string) => `${JSON.stringify({run, run_instance_id: run, state_dir: run, queued: false})}\n`
    writeFileSync(join(dir, 'children.jsonl'), line('p.1') + line('kid') + line('p.1') + 'not json\n')
    expect(nextLineageId(parent)).toEqual({id: 'p.3', n: 3})
    expect(nextLineageId(parent, 7)).toEqual({id: 'p.8', n: 8})
    expect(nextLineageId({...parent, run: 'x'.repeat(127)})).toBeUndefined()
    expect(nextLineageId({...parent, run: 'x'.repeat(126)})?.id).toBe(`${'x'.repeat(126)}.3`)
  })
})
