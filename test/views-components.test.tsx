/**
 * Terminal views, layer 1: the dumb Ink components rendered with
 * ink-testing-library (frames compared after stripping ANSI), and the pure
 * row logic and stores they are fed from, against real temp dirs.
 */
import {mkdirSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {stripVTControlCharacters as strip} from 'node:util'
import {render} from 'ink-testing-library'
import {afterEach, beforeEach, describe, expect, it} from 'vitest'
import {listRunSummaries} from '../src/lib/kernel/history/inspect.js'
import {notifyStateChange} from '../src/lib/base/bell/notify.js'
import type {RunSummary} from '../src/lib/kernel/runs/summary.js'
import type {TreeNode} from '../src/lib/kernel/history/forest.js'
import {chunkLines, type FollowSnapshot} from '../src/lib/services/view-state/follow-store.js'
import {countByStatus, displayDuration, fitRows, tableRows, treeRows} from '../src/lib/services/view-state/run-rows.js'
import {formatRunTable} from '../src/lib/surface/present/runs-table.js'
import {createStateStore, type StateStore} from '../src/lib/services/view-state/runs-store.js'
import {FollowView} from '../src/views/follow-view.js'
import {RunsScreen} from '../src/views/runs-screen.js'
import {removeDir, tempDir, waitFor} from './helpers.js'

const T0 = Date.parse('2026-01-02T03:04:05.000Z')
const clock = (ms: number) => ({readAt: T0, now: T0 + ms})

function run(id: string, status: string, extra: Partial<RunSummary> = {}): RunSummary {
  return {
    run: id,
    run_instance_id: `inst-${id}`,
    recipe: 'demo',
    status,
    owner: 'default',
    parent: null,
    root: id,
    depth: 0,
    created_at: new Date(T0).toISOString(),
    started_at: new Date(T0).toISOString(),
    ended_at: null,
    duration_ms: status === 'queued' ? null : status === 'running' ? 0 : 1500,
    exit_code: null,
    pid: 1,
    notification: 'normal',
    state_dir: `/state/runs/${id}`,
    ...extra,
  }
}

function node(id: string, status: string, children: TreeNode[] = [], extra: Partial<TreeNode> = {}): TreeNode {
  return {
    run: id,
    run_instance_id: `i-${id}`,
    recipe: null,
    status,
    depth: 0,
    created_at: '',
    duration_ms: 2000,
    usage: null,
    state_dir: `/s/${id}`,
    children,
    ...extra,
  }
}

describe('RunsScreen', () => {
  // The table fits $COLUMNS (80 without a terminal); these frames check whole cells.
  const columns = process.env.COLUMNS
  beforeEach(() => {
    process.env.COLUMNS = '200'
  })
  afterEach(() => {
    if (columns === undefined) delete process.env.COLUMNS
    else process.env.COLUMNS = columns
  })
  it('draws one row per Run with its status, a ticking duration for live Runs and the counts', () => {
    const runs = [run('build', 'running'), run('lint', 'failed'), run('docs', 'done')]
    const props = {
      title: 'actors',
      rows: tableRows({runs}),
      hidden: 0,
      layout: 'table' as const,
      counts: countByStatus(runs),
      damaged: 0,
    }
    const view = render(<RunsScreen {...props} clock={clock(12_300)} />)
    const frame = strip(view.lastFrame()!)
    expect(frame).toMatch(/● build\s+demo\s+running\s+-\s+03:04:05\s+12\.3s/)
    expect(frame).toMatch(/✖ lint\s+demo\s+failed\s+-\s+03:04:05\s+1\.5s/)
    expect(frame).toMatch(/✔ docs\s+demo\s+done/)
    expect(frame).toContain('1 running · 1 done · 1 failed')
    expect(frame).not.toContain('off-screen')
    // The next tick moves only the live Run's clock.
    view.rerender(<RunsScreen {...props} clock={clock(75_000)} />)
    const next = strip(view.lastFrame()!)
    expect(next).toMatch(/build\s+demo\s+running\s+-\s+\S+\s+1m15s/)
    expect(next).toMatch(/lint\s+demo\s+failed\s+-\s+\S+\s+1\.5s/)
    view.unmount()
  })

  it('draws the forest with branches, queued children and the usage of each tree', () => {
    const forest = [
      node(
        'coord',
        'running',
        [node('worker-1', 'done', [], {usage: 300}), node('worker-2', 'queued', [], {duration_ms: null})],
        {
          tree_usage: {tokens: null, reported_tokens: 300, runs: 3, unreported_runs: 2},
        },
      ),
      node('solo', 'failed', [], {
        usage: 40,
        tree_usage: {tokens: 40, reported_tokens: 40, runs: 1, unreported_runs: 0},
      }),
    ]
    const rows = treeRows({forest})
    const view = render(
      <RunsScreen
        title="tree"
        rows={rows}
        hidden={0}
        layout="tree"
        counts={countByStatus(rows)}
        clock={clock(1000)}
        damaged={0}
      />,
    )
    const frame = strip(view.lastFrame()!)
    expect(frame).toMatch(/RUN\s+STATUS\s+DURATION\s+USAGE\s+RECIPE/)
    expect(frame).toMatch(/● coord\s+running\s+3\.0s\s+tree unknown \(300 reported, 2 Runs unreported\)/)
    expect(frame).toMatch(/✔ ├─ worker-1\s+done\s+2\.0s\s+300 tokens/)
    expect(frame).toMatch(/○ └─ worker-2\s+queued\s+-\s+-/)
    expect(frame).toMatch(/✖ solo\s+failed\s+2\.0s\s+40 tokens/)
    expect(frame).toContain('1 queued · 1 running · 1 done · 1 failed')
    view.unmount()
  })

  it('says how many Runs are off-screen and how many dirs were unreadable', () => {
    const view = render(
      <RunsScreen title="t" rows={[]} hidden={7} layout="table" counts={[]} clock={clock(0)} damaged={2} />,
    )
    const frame = strip(view.lastFrame()!)
    expect(frame).toContain('… 7 more Runs off-screen')
    expect(frame).toContain('2 unreadable Run dirs skipped')
    expect(frame).toContain('no Runs yet')
    view.unmount()
  })
})

describe('FollowView', () => {
  const base: FollowSnapshot = {
    run: 'build',
    status: 'running',
    started_at: new Date(T0).toISOString(),
    lines: [],
    ended: false,
    now: T0 + 3200,
  }

  it('writes each line once, marks stderr, and shows the live status line until the end', () => {
    const lines = [
      {id: 0, stream: 'stdout' as const, text: 'compiling'},
      {id: 1, stream: 'stderr' as const, text: 'warning: x'},
    ]
    const view = render(<FollowView snapshot={{...base, lines}} />)
    let out = strip(view.frames.join(''))
    expect(out).toContain('compiling')
    expect(out).toContain('┃ warning: x')
    expect(out).not.toContain('┃ compiling')
    expect(strip(view.lastFrame()!)).toContain('● build running 3.2s')
    view.rerender(
      <FollowView snapshot={{...base, lines: [...lines, {id: 2, stream: 'stdout', text: 'linked'}], now: T0 + 4000}} />,
    )
    // ink-testing-library shows all static output plus the live part in each frame: every line exactly once.
    out = strip(view.lastFrame()!)
    expect(out.split('compiling').length - 1).toBe(1)
    expect(out.split('warning: x').length - 1).toBe(1)
    expect(out).toMatch(/compiling\n┃ warning: x\nlinked\n● build running 4\.0s/)
    view.rerender(
      <FollowView
        snapshot={{...base, lines: [...lines, {id: 2, stream: 'stdout', text: 'linked'}], status: 'done', ended: true}}
      />,
    )
    expect(strip(view.lastFrame()!)).not.toContain('build running')
    view.unmount()
  })

  it('splits chunks into lines without inventing an empty last line', () => {
    expect(chunkLines('a\nb\n')).toEqual(['a', 'b'])
    expect(chunkLines('partial')).toEqual(['partial'])
    expect(chunkLines('a\n\nb')).toEqual(['a', '', 'b'])
  })
})

describe('row logic', () => {
  it('fits a table by dropping finished Runs first, and a tree by dropping finished trees first', () => {
    const rows = tableRows({
      runs: [run('a', 'done'), run('b', 'running'), run('c', 'failed'), run('d', 'running'), run('e', 'queued')],
    })
    const table = fitRows(rows, 3, 'table')
    expect(table.rows.map((r) => r.run)).toEqual(['b', 'd', 'e'])
    expect(table.hidden).toBe(2)
    // Each row here is a tree of its own: the finished ones (a, c) leave first.
    const tree = fitRows(rows, 3, 'tree')
    expect(tree.rows.map((r) => r.run)).toEqual(['b', 'd', 'e'])
    expect(tree.hidden).toBe(2)
    // Live trees alone that still do not fit lose their tail.
    expect(fitRows(rows, 2, 'tree').rows.map((r) => r.run)).toEqual(['b', 'd'])
    expect(fitRows(rows, 10, 'table')).toEqual({rows, hidden: 0})
  })

  it('grows live durations with the clock and keeps finished ones', () => {
    expect(displayDuration({status: 'running', duration_ms: 1000}, clock(3200))).toBe('4.2s')
    expect(displayDuration({status: 'paused', duration_ms: 60_000}, clock(1000))).toBe('1m01s')
    expect(displayDuration({status: 'done', duration_ms: 850}, clock(99_999))).toBe('850ms')
    expect(displayDuration({status: 'queued', duration_ms: null}, clock(5000))).toBe('-')
  })

  it('prints the plain table without escape codes', () => {
    const text = formatRunTable(
      tableRows({runs: [run('build', 'running', {parent: 'root-1', duration_ms: 0})]}),
      'table',
      clock(1000),
    )
    expect(text).toBe(
      'RUN    RECIPE  STATUS   EXIT  STARTED   DURATION  CPU  MEM  COMMAND  PARENT\nbuild  demo    running  -     03:04:05  1.0s      -    -    -        root-1\n',
    )
    expect(formatRunTable([], 'table', clock(0))).toBe('')
  })
})

describe('state store', () => {
  let home: string
  let store: StateStore<ReturnType<typeof listRunSummaries>> | undefined
  afterEach(() => {
    store?.close()
    store = undefined
    removeDir(home)
  })

  function writeRun(id: string, status: string): void {
    const dir = join(home, 'runs', id)
    mkdirSync(dir, {recursive: true})
    const meta = {
      schema: 'actors-run-v1',
      run: id,
      run_instance_id: `i-${id}`,
      recipe: null,
      status,
      owner: 'default',
      root: id,
      depth: 0,
      created_at: new Date().toISOString(),
      started_at: new Date().toISOString(),
      argv: ['true'],
    }
    writeFileSync(join(dir, 'run.json'), JSON.stringify(meta))
  }

  it('re-reads on the doorbell, not on a timer, and coalesces bursts', async () => {
    home = tempDir()
    mkdirSync(join(home, 'runs'))
    writeRun('one', 'done')
    // No safety re-read and no tick: only file-system notifications can change the snapshot.
    store = createStateStore(home, () => listRunSummaries(home), {safetyMs: 0, tickMs: 0})
    expect(store.snapshot().data.runs.map((r) => r.run)).toEqual(['one'])
    let changes = 0
    store.subscribe(() => changes++)
    // A status change inside a Run dir is seen only once someone rings.
    writeFileSync(
      join(home, 'runs', 'one', 'run.json'),
      JSON.stringify({
        ...JSON.parse('{}'),
        schema: 'actors-run-v1',
        run: 'one',
        run_instance_id: 'i-one',
        recipe: null,
        status: 'failed',
        owner: 'default',
        root: 'one',
        depth: 0,
        created_at: new Date().toISOString(),
        argv: [],
      }),
    )
    await new Promise((r) => setTimeout(r, 150))
    expect(store.snapshot().data.runs[0]!.status).toBe('done')
    notifyStateChange(home)
    await waitFor(() => store!.snapshot().data.runs[0]!.status === 'failed', 5000, 'the store to see the ring')
    // A new Run dir is noticed through the runs/ directory itself.
    writeRun('two', 'done')
    const seen = await waitFor(
      () => store!.snapshot().data.runs.length === 2 && store!.snapshot(),
      5000,
      'the store to see run two',
    )
    expect(seen.data.runs.map((r) => r.run).sort()).toEqual(['one', 'two'])
    expect(changes).toBeGreaterThan(0)
    const before = store.snapshot().version
    for (let i = 0; i < 20; i++) notifyStateChange(home)
    await waitFor(() => store!.snapshot().version > before, 5000, 'a re-read after the burst')
    await new Promise((r) => setTimeout(r, 150))
    expect(store.snapshot().version - before).toBeLessThan(5)
  })

  it('does not re-read when some other file in the state root changes', async () => {
    home = tempDir()
    mkdirSync(join(home, 'runs'))
    writeRun('one', 'done')
    store = createStateStore(home, () => listRunSummaries(home), {safetyMs: 0, tickMs: 0})
    const before = store.snapshot().version
    // A file kept in the root (a load trace, a user's notes) written on and on: a view reading it would never rest.
    for (let i = 0; i < 20; i++) {
      writeFileSync(join(home, 'notes.txt'), `line ${i}\n`, {flag: 'a'})
      await new Promise((r) => setTimeout(r, 10))
    }
    await new Promise((r) => setTimeout(r, 150))
    expect(store.snapshot().version).toBe(before)
    notifyStateChange(home)
    await waitFor(() => store!.snapshot().version > before, 5000, 'the store to see the ring')
  })

  it('advances the clock on ticks without re-reading', async () => {
    home = tempDir()
    mkdirSync(join(home, 'runs'))
    writeRun('live', 'running')
    store = createStateStore(home, () => listRunSummaries(home), {safetyMs: 0, tickMs: 40})
    const first = store.snapshot()
    await waitFor(() => store!.snapshot().now > first.now, 3000, 'a tick')
    expect(store.snapshot().version).toBe(first.version)
    expect(store.snapshot().readAt).toBe(first.readAt)
  })
})
