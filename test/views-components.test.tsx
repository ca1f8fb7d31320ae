/**
 * Terminal views, layer 1: the dumb Ink components rendered with
 * ink-testing-library (frames compared after stripping ANSI), and the pure
 * row logic and Runs store they are fed from, against real temp dirs.
 */
import {mkdirSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {stripVTControlCharacters as strip} from 'node:util'
import {render} from 'ink-testing-library'
import {afterEach, describe, expect, it} from 'vitest'
import type {RunSummary} from '../src/lib/run-summary.js'
import {countByStatus, displayDuration, fitRows, tableRows} from '../src/lib/views/run-rows.js'
import {formatRunTable} from '../src/lib/views/runs-plain.js'
import {createRunsStore, type RunsStore} from '../src/lib/views/runs-store.js'
import {notifyStateChange} from '../src/lib/notify.js'
import {RunsScreen} from '../src/views/runs-screen.js'
import {removeDir, tempDir, waitFor} from './helpers.js'

const T0 = Date.parse('2026-01-02T03:04:05.000Z')

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
    duration_ms: ['running', 'queued', 'paused'].includes(status) ? null : 1500,
    exit_code: null,
    pid: 1,
    state_dir: `/state/runs/${id}`,
    ...extra,
  }
}

describe('RunsScreen', () => {
  it('draws one row per Run with its status, a ticking duration for live Runs and the counts', () => {
    const runs = [run('build', 'running'), run('lint', 'failed'), run('docs', 'done')]
    const view = render(<RunsScreen title="actors" rows={tableRows(runs)} hidden={0} counts={countByStatus(runs)} now={T0 + 12_300} damaged={0} />)
    const frame = strip(view.lastFrame()!)
    expect(frame).toMatch(/● build\s+demo\s+running\s+2026-01-02 03:04:05\s+12\.3s/)
    expect(frame).toMatch(/✖ lint\s+demo\s+failed\s+2026-01-02 03:04:05\s+1\.5s/)
    expect(frame).toMatch(/✔ docs\s+demo\s+done/)
    expect(frame).toContain('1 running · 1 done · 1 failed')
    expect(frame).not.toContain('off-screen')
    // The next tick moves only the live Run's clock.
    view.rerender(<RunsScreen title="actors" rows={tableRows(runs)} hidden={0} counts={countByStatus(runs)} now={T0 + 75_000} damaged={0} />)
    const next = strip(view.lastFrame()!)
    expect(next).toMatch(/build\s+demo\s+running\s+\S+ \S+\s+1m15s/)
    expect(next).toMatch(/lint\s+demo\s+failed\s+\S+ \S+\s+1\.5s/)
    view.unmount()
  })

  it('says how many Runs are off-screen and how many dirs were unreadable', () => {
    const view = render(<RunsScreen title="t" rows={[]} hidden={7} counts={[]} now={T0} damaged={2} />)
    const frame = strip(view.lastFrame()!)
    expect(frame).toContain('… 7 more Runs off-screen')
    expect(frame).toContain('2 unreadable Run dirs skipped')
    expect(frame).toContain('no Runs yet')
    view.unmount()
  })
})

describe('row logic', () => {
  it('fits a table by dropping finished Runs first, and a tree by cutting its tail', () => {
    const rows = tableRows([run('a', 'done'), run('b', 'running'), run('c', 'failed'), run('d', 'running'), run('e', 'queued')])
    const table = fitRows(rows, 3, 'table')
    expect(table.rows.map((r) => r.run.run)).toEqual(['b', 'd', 'e'])
    expect(table.hidden).toBe(2)
    const tree = fitRows(rows, 3, 'tree')
    expect(tree.rows.map((r) => r.run.run)).toEqual(['a', 'b', 'c'])
    expect(tree.hidden).toBe(2)
    expect(fitRows(rows, 10, 'table')).toEqual({rows, hidden: 0})
  })

  it('measures live durations against the clock and keeps finished ones', () => {
    expect(displayDuration(run('x', 'running'), T0 + 4200)).toBe('4.2s')
    expect(displayDuration(run('x', 'paused'), T0 + 61_000)).toBe('1m01s')
    expect(displayDuration(run('x', 'done', {duration_ms: 850}), T0 + 99_999)).toBe('850ms')
    expect(displayDuration(run('x', 'queued', {started_at: null}), T0)).toBe('-')
  })

  it('prints the plain table without escape codes', () => {
    const text = formatRunTable(tableRows([run('build', 'running', {parent: 'root-1'})]), T0 + 1000)
    expect(text).toBe('RUN    RECIPE  STATUS   STARTED              DURATION  PARENT\nbuild  demo    running  2026-01-02 03:04:05  1.0s      root-1\n')
    expect(formatRunTable([], T0)).toBe('')
  })
})

describe('Runs store', () => {
  let home: string
  let store: RunsStore | undefined
  afterEach(() => {
    store?.close()
    store = undefined
    removeDir(home)
  })

  function writeRun(id: string, status: string): void {
    const dir = join(home, 'runs', id)
    mkdirSync(dir, {recursive: true})
    const meta = {schema: 'actors-run-v1', run: id, run_instance_id: `i-${id}`, recipe: null, status, owner: 'default', root: id, depth: 0, created_at: new Date().toISOString(), started_at: new Date().toISOString(), argv: ['true']}
    writeFileSync(join(dir, 'run.json'), JSON.stringify(meta))
  }

  it('re-reads on the doorbell, not on a timer, and ticks only the clock', async () => {
    home = tempDir()
    mkdirSync(join(home, 'runs'))
    writeRun('one', 'done')
    // No safety re-read and no tick: only file-system notifications can change the snapshot.
    store = createRunsStore(home, {safetyMs: 0, tickMs: 0})
    expect(store.snapshot().runs.map((r) => r.run)).toEqual(['one'])
    let changes = 0
    store.subscribe(() => changes++)
    writeRun('two', 'done')
    notifyStateChange(home)
    const seen = await waitFor(() => store!.snapshot().runs.length === 2 && store!.snapshot(), 5000, 'the store to see run two')
    expect(seen.runs.map((r) => r.run).sort()).toEqual(['one', 'two'])
    expect(changes).toBeGreaterThan(0)
    // A burst of rings is coalesced into few re-reads.
    const before = store.snapshot().version
    for (let i = 0; i < 20; i++) notifyStateChange(home)
    await waitFor(() => store!.snapshot().version > before, 5000, 'a re-read after the burst')
    await new Promise((r) => setTimeout(r, 150))
    expect(store.snapshot().version - before).toBeLessThan(5)
  })

  it('advances the clock on ticks without re-reading', async () => {
    home = tempDir()
    mkdirSync(join(home, 'runs'))
    writeRun('live', 'running')
    store = createRunsStore(home, {safetyMs: 0, tickMs: 40})
    const first = store.snapshot()
    await waitFor(() => store!.snapshot().now > first.now, 3000, 'a tick')
    expect(store.snapshot().version).toBe(first.version)
  })
})
