/**
 * The state behind the live views, kept in src/lib/services/view-state/: attention events
 * as they happen (read from real Traces in a temp dir), every finished Run's
 * line in the live wait (also one no look caught live), a "waiting for N"
 * count that does not rise as Runs start inside a tree, and the live list
 * nested like the card. Components only draw what these give them.
 */
import {mkdirSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {stripVTControlCharacters as strip} from 'node:util'
import {render} from 'ink-testing-library'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import type {RunSummary} from '../src/lib/kernel/runs/summary.js'
import {appendTraceEvent} from '../src/lib/kernel/runs/trace.js'
import {AttentionFeed} from '../src/lib/services/view-state/attention-feed.js'
import {nestByParent, nestedTableRows} from '../src/lib/services/view-state/run-nesting.js'
import {rowCells} from '../src/lib/services/view-state/run-rows.js'
import {WaitTracker} from '../src/lib/services/view-state/wait-tracker.js'
import {WaitView} from '../src/views/wait-view.js'
import {actors, removeDir, tempDir, waitForResult} from './helpers.js'
import {listActiveSummaries} from '../src/lib/kernel/history/inspect.js'
import {importView} from '../src/lib/base/platform/esm-import.js'

let root: string
beforeAll(() => (root = tempDir('actors-live-state-')))
afterAll(() => removeDir(root))

function summary(run: string, status: string, extra: Partial<RunSummary> = {}): RunSummary {
  return {
    run,
    run_instance_id: `i-${run}`,
    recipe: null,
    status,
    owner: 'default',
    parent: null,
    root: run,
    depth: 0,
    created_at: '',
    started_at: null,
    ended_at: null,
    duration_ms: 1000,
    exit_code: null,
    pid: null,
    notification: 'normal',
    state_dir: join(root, run),
    ...extra,
  }
}

function runDir(name: string): string {
  const dir = join(root, name)
  mkdirSync(dir, {recursive: true})
  return dir
}

const clock = {now: 0, readAt: 0}

describe('attention in live views', () => {
  it('reports each attention event of a Run in view once, only those newer than the view', async () => {
    const dir = runDir('worker')
    appendTraceEvent(dir, {kind: 'old.news', summary: 'before the view', attention: 'notify'})
    await new Promise((r) => setTimeout(r, 5))
    const feed = new AttentionFeed()
    const run = {dir, run: 'worker', status: 'running'}
    expect(feed.update([run])).toEqual([])
    appendTraceEvent(dir, {kind: 'step.plain', summary: 'no attention'})
    appendTraceEvent(dir, {kind: 'review.ready', summary: 'the diff\nis ready', attention: 'notify'})
    const notes = feed.update([run])
    expect(notes).toMatchObject([
      {run: 'worker', kind: 'review.ready', attention: 'notify', summary: 'the diff\nis ready'},
    ])
    expect(feed.update([run])).toEqual([])
    // An event emitted right before the Run ended still shows at the look that sees it ended.
    appendTraceEvent(dir, {kind: 'last.words', attention: 'followup'})
    expect(feed.update([{...run, status: 'done'}]).map((n) => n.kind)).toEqual(['last.words'])
  })

  it('the live wait logs attention of the Runs in its scope between the finished lines', () => {
    const dir = runDir('asker')
    const tracker = new WaitTracker({owner: 'default', ids: ['asker']}, new AttentionFeed())
    tracker.update({runs: [summary('asker', 'running'), summary('other', 'running')]})
    appendTraceEvent(dir, {kind: 'review.ready', summary: 'look please', attention: 'notify'})
    appendTraceEvent(runDir('other'), {kind: 'not.mine', attention: 'notify'})
    const p = tracker.update({runs: [summary('asker', 'done'), summary('other', 'running')]})
    expect(p.log.map((item) => (item.kind === 'finished' ? `done ${item.run.run}` : `note ${item.note.kind}`))).toEqual(
      ['done asker', 'note review.ready'],
    )
    const view = render(
      <WaitView
        items={p.log.map((item) =>
          item.kind === 'finished'
            ? {kind: 'finished' as const, run: item.run}
            : {kind: 'attention' as const, note: item.note},
        )}
        pending={[]}
        clock={clock}
        maxPending={10}
      />,
    )
    expect(strip(view.lastFrame()!)).toMatch(/! \d\d:\d\d:\d\d asker notify review\.ready: look please/)
    view.unmount()
  })
})

describe('importView', () => {
  it('loads a view from the sources (src/views/), as the bundle loads dist/views/', async () => {
    const view = await importView<{showFollow: unknown}>('follow-live')
    expect(typeof view.showFollow).toBe('function')
  })
})

describe('live wait progress', () => {
  it('gives every Run that finished during the wait its line, also one never seen live', () => {
    const tracker = new WaitTracker({owner: 'default', ids: ['p']})
    const kid = (name: string, status: string) => summary(name, status, {parent: 'p', root: 'p', depth: 1})
    tracker.update({runs: [summary('p', 'running'), kid('c1', 'running'), summary('earlier', 'done', {root: 'p'})]})
    // c3 started and ended between two looks: it was never seen running.
    const p = tracker.update({
      runs: [
        summary('p', 'running'),
        kid('c1', 'done'),
        kid('c2', 'running'),
        kid('c3', 'done'),
        summary('earlier', 'done', {root: 'p'}),
      ],
    })
    expect(p.finished.map((r) => r.run)).toEqual(['c1', 'c3'])
    const end = tracker.update({runs: [summary('p', 'done'), kid('c1', 'done'), kid('c2', 'done'), kid('c3', 'done')]})
    expect(end.finished.map((r) => r.run)).toEqual(['c1', 'c3', 'p', 'c2'])
  })

  it('gives its line to a Run that ended and was collected between two looks (gone from the listing)', async () => {
    const h = tempDir('actors-live-vanish-')
    try {
      const gate = join(h, 'gate')
      const started = actors(h, [
        'run',
        '--name',
        'quick',
        '--json',
        '--',
        'sh',
        '-c',
        `while [ ! -e ${gate} ]; do sleep 0.05; done`,
      ])
      const tracker = new WaitTracker({owner: 'default', ids: ['quick']})
      expect(tracker.update(listActiveSummaries(h)).pending.map((r) => r.run)).toEqual(['quick'])
      writeFileSync(gate, '')
      await waitForResult(started.json.state_dir)
      // Another wait collects it before this view looks again: the listing of live and unreported Runs loses it.
      expect(actors(h, ['wait', 'quick', '--json']).code).toBe(0)
      expect(listActiveSummaries(h).runs.map((r) => r.run)).not.toContain('quick')
      const after = tracker.update(listActiveSummaries(h))
      expect(after.finished.map((r) => [r.run, r.status])).toEqual([['quick', 'done']])
      expect(after.log).toHaveLength(1)
      // Once: a later look does not log it again.
      expect(tracker.update(listActiveSummaries(h)).log).toHaveLength(1)
    } finally {
      removeDir(h)
    }
  })

  it('counts the trees it waits for: Runs starting inside one never raise the count', () => {
    const tracker = new WaitTracker({owner: 'default'})
    const kid = (name: string, status: string, parent = 'p') => summary(name, status, {parent, root: 'p', depth: 1})
    const looks = [
      [summary('p', 'running'), summary('q', 'running')],
      [summary('p', 'running'), summary('q', 'running'), kid('c1', 'running'), kid('c2', 'running')],
      [
        summary('p', 'running'),
        summary('q', 'done'),
        kid('c1', 'running'),
        kid('c2', 'running'),
        kid('c3', 'running'),
        kid('g1', 'running', 'c1'),
      ],
      [
        summary('p', 'done'),
        summary('q', 'done'),
        kid('c1', 'running'),
        kid('c2', 'done'),
        kid('c3', 'running'),
        kid('g1', 'done', 'c1'),
      ],
      [
        summary('p', 'done'),
        summary('q', 'done'),
        kid('c1', 'done'),
        kid('c2', 'done'),
        kid('c3', 'done'),
        kid('g1', 'done', 'c1'),
      ],
    ]
    const counts = looks.map((runs) => tracker.update({runs}).waitingFor)
    expect(counts).toEqual([2, 2, 1, 1, 0])
    const progress = new WaitTracker({owner: 'default'}).update({runs: looks[2]!})
    expect(progress.pendingTree.map((n) => `${n.prefix}${n.item.run}`)).toEqual([
      'p',
      '├─ c1',
      '│  └─ g1',
      '├─ c2',
      '└─ c3',
    ])
    const view = render(
      <WaitView
        items={[]}
        pending={progress.pending}
        pendingTree={progress.pendingTree}
        waitingFor={progress.waitingFor}
        clock={clock}
        maxPending={10}
      />,
    )
    const frame = strip(view.lastFrame()!)
    expect(frame).toContain('waiting for 1 Run (4 more inside it)')
    expect(frame).toMatch(/│ {2}└─ ● g1 running/)
    view.unmount()
  })
})

describe('the live list is a tree', () => {
  it('nests children under their parents in the inspect --watch table, like the card', () => {
    const listing = {
      runs: [
        summary('c2', 'running', {parent: 'p'}),
        summary('solo', 'done'),
        summary('p', 'running'),
        summary('c1', 'done', {parent: 'p'}),
        summary('g', 'running', {parent: 'c1'}),
      ],
    }
    const rows = nestedTableRows(listing)
    expect(rows.map((row) => rowCells(row, 'table', clock)[0])).toEqual(['solo', 'p', '├─ c2', '└─ c1', '   └─ g'])
    // A parent cycle (damaged records) still shows every Run.
    expect(
      nestByParent(
        [
          {id: 'a', parent: 'b'},
          {id: 'b', parent: 'a'},
        ],
        (x) => x.id,
        (x) => x.parent,
      ),
    ).toHaveLength(2)
  })
})
