/**
 * Draining a backlog (issue 12): a plain `wait` reads the run index's delivery
 * queue in windows (markers named by end time, owner and tree), so it must
 * still deliver in batch order across windows, keep trees whole, count what
 * it did not read, and never report a Run twice or lose one, also with two
 * waits at once; the index tolerates foreign names and markers of the
 * earlier form. And prune compacts the launch log. Timing lives in the bench.
 */
import {existsSync, readFileSync, renameSync, rmSync, writeFileSync} from 'node:fs'
import {basename, dirname, join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {markerTag} from '../src/lib/kernel/history/index-markers.js'
import {
  actors,
  actorsAsync,
  homesPerTest,
  indexEntries,
  indexEntryPaths,
  readJson,
  waitFor,
  waitForResult,
  writeFinishedRun,
  type CliResult,
} from './helpers.js'

const home = homesPerTest('actors-drain-')
const BASE = Date.parse('2026-01-01T00:00:00Z')
const at = (seconds: number) => new Date(BASE + seconds * 1000).toISOString()
const delivered = (r: CliResult): string[] => [
  ...(r.json?.rows ?? []).map((row: any) => row.run),
  ...(r.json?.overflow_runs ?? []),
  // Runs ended by an explicit control stop/kill are members without a row.
  ...(r.json?.stopped_runs ?? []).map((s: any) => s.run),
]
const entries = indexEntries
const instanceOf = (h: string, id: string) => readJson(join(h, 'runs', id, 'run.json')).run_instance_id

describe('draining a backlog through the delivery queue', () => {
  it('delivers oldest first across windows, keeps a tree whole, counts the rest, and two waits split the rest once each', async () => {
    const h = home()
    // 700 Runs whose end times run against their names (q-699 ended first): order comes from end times.
    const ids = Array.from({length: 700}, (_, i) => `q-${String(i).padStart(3, '0')}`)
    ids.forEach((id, i) => {
      writeFinishedRun(h, id, {ended: at(100 + (699 - i))})
    })
    // A tree whose top ended before everything and whose child ended after everything: far outside the first window.
    const top = writeFinishedRun(h, 'tree-top', {ended: at(0)})
    const parent = {run: 'tree-top', run_instance_id: instanceOf(h, 'tree-top'), state_dir: top}
    writeFinishedRun(h, 'tree-kid', {ended: at(5000), meta: {parent, root: 'tree-top', depth: 1}})
    const expected = ['tree-top', 'tree-kid', ...[...ids].reverse()]

    const first = actors(h, ['wait', '--json'])
    expect(first.code, first.stderr).toBe(0)
    expect(first.json.members).toBe(256)
    expect(first.json.rows[1]).toMatchObject({run: 'tree-kid', depth: 1, parent: 'tree-top'})
    expect(delivered(first)).toEqual(expected.slice(0, 256))
    // What the wait did not read is still counted.
    expect(first.json.deferred).toBe(702 - 256)
    const second = actors(h, ['wait', '--json'])
    expect(delivered(second)).toEqual(expected.slice(256, 512))

    // Two waits at once over the rest: each Run exactly once, none lost.
    const seen: string[] = []
    const loop = async () => {
      for (let i = 0; i < 20; i++) {
        const r = await actorsAsync(h, ['wait', '--json'])
        expect([0, 124], r.stderr).toContain(r.code)
        if (r.json.members === 0) return
        seen.push(...delivered(r))
      }
    }
    await Promise.all([loop(), loop()])
    expect(seen.length).toBe(702 - 512)
    expect(new Set([...delivered(first), ...delivered(second), ...seen])).toEqual(new Set(expected))
    expect(entries(h)).toEqual([])
    expect(actors(h, ['wait', '--json', '--timeout', '0']).json.members).toBe(0)
  }, 240_000)

  it('takes queued entries in batch order where their names sort otherwise: tied end times, an end time that is a prefix of another', () => {
    const h = home()
    // 300 Runs that ended at the same moment: batch order is by run id, while their names sort by tree tag (a hash).
    // Chosen so that in name order the last Run of the first window (272, after the two below) is the greatest id: a
    // reader trusting name order would read the wrong 272, find its batch settled (every unread Run would seem to sort
    // later) and deliver it.
    const pool = Array.from({length: 1000}, (_, i) => `t-${String(i).padStart(3, '0')}`)
    const last = pool[999]
    const below = pool.filter((id) => id !== last && markerTag(id) < markerTag(last))
    const above = pool.filter((id) => id !== last && markerTag(id) > markerTag(last))
    const tied = [...below.slice(0, 269), last, ...above.slice(0, 30)].sort()
    for (const id of tied) writeFinishedRun(h, id, {ended: at(100)})
    // An end time that is a prefix of another sorts first as a batch, last as a name (`~` follows it).
    writeFinishedRun(h, 'pre-long', {ended: '2026-01-01T00:00:00.500Z'})
    writeFinishedRun(h, 'pre-short', {ended: '2026-01-01T00:00:00'})
    const first = actors(h, ['wait', '--json'])
    expect(first.code, first.stderr).toBe(0)
    expect(delivered(first)).toEqual(['pre-short', 'pre-long', ...tied.slice(0, 254)])
    expect(first.json.deferred).toBe(302 - 256)
    const second = actors(h, ['wait', '--json'])
    expect(delivered(second)).toEqual(tied.slice(254))
    expect(entries(h)).toEqual([])
  }, 120_000)

  it('a finished Run waits in the queue under a name of its end time, owner and tree; live commands skip the queue', async () => {
    const h = home()
    writeFinishedRun(h, 'done-one', {ended: at(7)})
    const live = actors(h, ['run', '--json', '--name', 'live-one', '--', 'sleep', '30']).json
    await waitFor(() => readJson(join(live.state_dir, 'run.json')).started_at, 10_000, 'the live Run to start')
    const running = actors(h, ['inspect', '--status', 'running', '--json'])
    expect(running.json.runs.map((r: any) => r.run)).toEqual(['live-one'])
    const names = entries(h).sort()
    expect(names).toHaveLength(2)
    expect(names[0]).toBe(`live-one@${live.run_instance_id}`)
    expect(names[1]).toMatch(
      new RegExp(`^~${at(7).replace(/\./g, '\\.')}~[0-9a-f]{8}~[0-9a-f]{8}~done-one@${instanceOf(h, 'done-one')}$`),
    )
    // Queued in its owner's queue, apart from the live markers (which is all a live command lists).
    expect(indexEntryPaths(h).sort()).toEqual([
      `live-one@${live.run_instance_id}`,
      `queue/${markerTag(readJson(join(h, 'runs', 'done-one', 'run.json')).owner)}/${names[1]}`,
    ])
    // The live Run, once finished, is queued and delivered with the other.
    actors(h, ['control', 'live-one', 'kill'])
    await waitForResult(live.state_dir)
    const got = actors(h, ['wait', '--json'])
    expect(delivered(got).sort()).toEqual(['done-one', 'live-one'])
    expect(entries(h)).toEqual([])
  })

  it('ignores foreign names in the index and takes markers of the earlier form (finished Runs not queued yet)', () => {
    const h = home()
    const ids = ['e-0', 'e-1', 'e-2']
    for (const [i, id] of ids.entries()) writeFinishedRun(h, id, {ended: at(i)})
    expect(actors(h, ['inspect', '--status', 'running', '--json']).code).toBe(0)
    // Back to the earlier form: `<run>@<instance>` for finished Runs; plus names no kernel wrote.
    for (const path of indexEntryPaths(h))
      renameSync(join(h, 'index', path), join(h, 'index', path.slice(path.lastIndexOf('~') + 1)))
    const foreign = ['~not~a~marker@x', '~2026~zzzzzzzz~00000000~e-0@y', '~a~b~c~d~e~f@g', 'nothing-here', '@', '~']
    for (const name of foreign) writeFileSync(join(h, 'index', name), '')
    const first = actors(h, ['wait', '--json'])
    expect(first.code, first.stderr).toBe(0)
    expect(delivered(first)).toEqual(ids)
    expect(actors(h, ['wait', '--json', '--timeout', '0']).json.members).toBe(0)
    // Foreign files are not the index's to delete.
    expect(entries(h).sort()).toEqual([...foreign].sort())
  })
})

describe("the owner's queue cursor", () => {
  const queueDir = (h: string, id: string) =>
    join(h, 'index', 'queue', markerTag(readJson(join(h, 'runs', id, 'run.json')).owner))
  // The cursor files live beside the queue directory (index/queue/.<tag>.cursor), which holds markers alone.
  const beside = (dir: string, name: string) => `${dirname(dir)}/.${basename(dir)}${name}`

  it('later waits read on where the last left off: a tree far apart is kept whole, a Run queued meanwhile comes in order', () => {
    const h = home()
    // Enough that a cursor is kept (a queue of fewer than 512 is listed each time).
    const ids = Array.from({length: 1100}, (_, i) => `c-${String(i).padStart(4, '0')}`)
    ids.forEach((id, i) => {
      writeFinishedRun(h, id, {ended: at(100 + i)})
    })
    const top = writeFinishedRun(h, 'top2', {ended: at(700.5)})
    writeFinishedRun(h, 'kid2', {
      ended: at(9000),
      meta: {parent: {run: 'top2', run_instance_id: instanceOf(h, 'top2'), state_dir: top}, root: 'top2', depth: 1},
    })
    const first = actors(h, ['wait', '--json'])
    expect(delivered(first)).toEqual(ids.slice(0, 256))
    expect(existsSync(beside(queueDir(h, 'c-0000'), '.cursor'))).toBe(true)
    // Queued after the cursor was written, and older than all that is left: the next wait lists the queue again.
    writeFinishedRun(h, 'early', {ended: at(50)})
    const second = actors(h, ['wait', '--json'])
    expect(delivered(second)).toEqual(['early', ...ids.slice(256, 511)])
    expect(second.json.deferred).toBe(591)
    // From the cursor: the tree's child ended long after everything, and still follows its top.
    const third = actors(h, ['wait', '--json'])
    expect(third.code, third.stderr).toBe(0)
    expect(delivered(third)).toEqual([...ids.slice(511, 601), 'top2', 'kid2', ...ids.slice(601, 765)])
    const rest = [...delivered(actors(h, ['wait', '--json'])), ...delivered(actors(h, ['wait', '--json']))]
    expect(rest).toEqual(ids.slice(765))
    expect(actors(h, ['wait', '--json', '--timeout', '0']).json.members).toBe(0)
    expect(entries(h)).toEqual([])
  }, 120_000)

  it('a damaged or forged cursor, or a queue change whose flag was lost, loses nothing and reports nothing twice', () => {
    const h = home()
    const ids = Array.from({length: 2000}, (_, i) => `d-${String(i).padStart(4, '0')}`)
    ids.forEach((id, i) => {
      writeFinishedRun(h, id, {ended: at(1000 + i)})
    })
    const dir = queueDir(h, ids[0])
    const cursor = beside(dir, '.cursor')
    const damage = [
      () => writeFileSync(beside(dir, '.cursor-at'), '{not json'),
      () =>
        writeFileSync(
          beside(dir, '.cursor-at'),
          JSON.stringify({id: 'someone-else', offset: 1, consumed: 0, skip: []}),
        ),
      () => writeFileSync(cursor, readFileSync(cursor, 'latin1').slice(0, 5000), 'latin1'),
      // Forged lines where the next wait reads on: one shaped as the kernel writes them but naming no Run of this root,
      // one whose name is no marker's. Both are passed over (the position moves past them), and nothing else changes.
      () => {
        const offset = JSON.parse(readFileSync(beside(dir, '.cursor-at'), 'utf8')).offset
        const text = readFileSync(cursor, 'latin1')
        const forged = `=deadbeef~${at(1)}~${markerTag('x')}~deadbeef~ghost@x\n=deadbeef~not-a-marker\n`
        writeFileSync(cursor, text.slice(0, offset) + forged + text.slice(offset), 'latin1')
        return offset
      },
    ]
    const got: string[] = []
    got.push(...delivered(actors(h, ['wait', '--json'])))
    for (const spoil of damage) {
      const forgedAt = spoil()
      const r = actors(h, ['wait', '--json'])
      expect(r.code, r.stderr).toBe(0)
      got.push(...delivered(r))
      expect(got).toEqual(ids.slice(0, got.length))
      if (typeof forgedAt === 'number')
        expect(JSON.parse(readFileSync(beside(dir, '.cursor-at'), 'utf8')).offset).toBeGreaterThan(forgedAt + 100)
    }
    // A Run queued whose flag never came (its writer killed between the two): delivered still, once the cursor runs out.
    expect(existsSync(cursor)).toBe(true)
    writeFinishedRun(h, 'lost', {ended: at(1)})
    expect(actors(h, ['inspect', '--status', 'running', '--json']).code).toBe(0)
    rmSync(beside(dir, '.changed'), {force: true})
    for (let i = 0; i < 5; i++) {
      const r = actors(h, ['wait', '--json'])
      if (r.json.members === 0) break
      got.push(...delivered(r))
    }
    expect(got.filter((id) => id !== 'lost')).toEqual(ids)
    expect(got.filter((id) => id === 'lost')).toEqual(['lost'])
    expect(entries(h)).toEqual([])
  }, 180_000)
})

describe('prune and the launch log', () => {
  const logLines = (h: string) =>
    readFileSync(join(h, 'runs', '.cache', 'launches.log'), 'utf8')
      .trim()
      .split('\n')
      .map((line) => line.split(' ')[1])

  it('prune drops the lines of pruned Runs and older launches of a relaunched id', async () => {
    const h = home()
    for (const id of ['p0', 'p1', 'p2', 'p3'])
      await waitForResult(actors(h, ['run', '--json', '--name', id, '--', 'true']).json.state_dir)
    await waitForResult(actors(h, ['run', '--json', '--name', 'p0', '--', 'true']).json.state_dir)
    await waitFor(
      () =>
        readJson(join(h, 'runs', 'p0', 'run.json')).generation === 2 &&
        readJson(join(h, 'runs', 'p0', 'run.json')).status === 'done',
      10_000,
      'the relaunch to end',
    )
    expect(logLines(h)).toEqual(['p0', 'p1', 'p2', 'p3', 'p0'])
    expect(actors(h, ['prune', 'p1', 'p2', '--json']).json.pruned).toEqual(['p1', 'p2'])
    expect(logLines(h)).toEqual(['p3', 'p0'])
    // Pruned unreported Runs leave the run index at once.
    expect(entries(h).filter((name) => /(^|~)p[12]@/.test(name))).toEqual([])
    expect(entries(h).filter((name) => /(^|~)p3@/.test(name))).toHaveLength(1)
    expect(actors(h, ['inspect', '--limit', '5', '--json']).json.runs.map((r: any) => r.run)).toEqual(['p3', 'p0'])
  })

  it('launches logged while a prune compacts are all kept', async () => {
    const h = home()
    for (let i = 0; i < 300; i++) writeFinishedRun(h, `old-${i}`, {ended: at(i)})
    // The index rebuild logs the copied-in Runs.
    expect(actors(h, ['inspect', '--status', 'running', '--json']).code).toBe(0)
    expect(logLines(h)).toHaveLength(300)
    const prune = actorsAsync(h, ['prune', '--json'])
    const launches = Array.from({length: 6}, (_, i) =>
      actorsAsync(h, ['run', '--json', '--name', `new-${i}`, '--', 'sleep', '20']),
    )
    const [pruned, ...started] = await Promise.all([prune, ...launches])
    expect(pruned.code, pruned.stderr).toBe(0)
    for (const r of started) expect(r.code, r.stderr).toBe(0)
    const lines = logLines(h)
    for (let i = 0; i < 6; i++) expect(lines).toContain(`new-${i}`)
    expect(lines.filter((id) => id.startsWith('old-'))).toEqual([])
    for (let i = 0; i < 6; i++) actors(h, ['control', `new-${i}`, 'kill'])
  }, 240_000)
})
