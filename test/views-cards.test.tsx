/**
 * Terminal views, layer 1 (continued): the completion card, the wait
 * progress, the now-playing panel and its key map, rendered with
 * ink-testing-library and compared after stripping ANSI.
 */
import {stripVTControlCharacters as strip} from 'node:util'
import {render} from 'ink-testing-library'
import {describe, expect, it} from 'vitest'
import type {PlaybackStatus} from '../src/lib/services/music/types.js'
import type {RunSummary} from '../src/lib/kernel/runs/summary.js'
import {cardModel} from '../src/lib/services/view-state/card-model.js'
import {keyToCommand, nowPlayingModel, progressBar} from '../src/lib/services/view-state/now-playing.js'
import {WaitTracker} from '../src/lib/services/view-state/wait-tracker.js'
import type {BatchDocument, BatchRow} from '../src/lib/services/wait/batch.js'
import {CompletionCard} from '../src/views/completion-card.js'
import {NowPlaying} from '../src/views/now-playing.js'
import {WaitView} from '../src/views/wait-view.js'

function row(run: string, status: string, extra: Partial<BatchRow> = {}): BatchRow {
  return {
    run,
    run_instance_id: `i-${run}`,
    generation: 1,
    status,
    depth: 0,
    parent: null,
    summary: `${run} summary`,
    output: '',
    artifacts: [],
    artifacts_total: 0,
    usage: null,
    collected: [],
    collected_total: 0,
    exit_code: 0,
    duration_ms: 1200,
    budget_exceeded: false,
    ended_at: null,
    state_dir: `/s/${run}`,
    ...extra,
  }
}

function batch(rows: BatchRow[], extra: Partial<BatchDocument> = {}): BatchDocument {
  const counts: Record<string, number> = {}
  for (const r of rows) counts[r.status] = (counts[r.status] ?? 0) + 1
  return {
    schema: 'actors-batch-v1',
    batch_id: 'abcdef1234567890',
    owner: 'default',
    created_at: '',
    window: {from: null, to: null},
    members: rows.length,
    counts,
    rows,
    overflow: 0,
    overflow_runs: [],
    deferred: 0,
    pending: [],
    pending_count: 0,
    unknown: [],
    already_reported: [],
    attention: [],
    timed_out: false,
    redelivered: false,
    hint: 'actors inspect coord (one Run in detail), actors inspect --tree (the forest)',
    ...extra,
  }
}

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
    state_dir: `/s/${run}`,
    ...extra,
  }
}

describe('CompletionCard', () => {
  it('shows counts, the indented forest with status, duration, summary and artifacts, the notes and the hint', () => {
    const doc = batch(
      [
        row('coord', 'done'),
        row('worker-1', 'failed', {
          depth: 1,
          parent: 'coord',
          summary: 'tests failed:\n3 of 40',
          artifacts: [{name: 'report', path: '/r', bytes: 2048, sha256: 'x'}],
          artifacts_total: 6,
        }),
        row('worker-2', 'done', {depth: 1, parent: 'coord', duration_ms: 61_000, budget_exceeded: true}),
      ],
      {
        overflow: 2,
        pending: [{run: 'late', run_instance_id: 'i', status: 'running'}],
        pending_count: 1,
        attention: [
          {
            run: 'worker-2',
            run_instance_id: 'i',
            event_id: 'e',
            kind: 'review.ready',
            summary: 'please look',
            attention: 'followup',
            ts: '',
          },
        ],
      },
    )
    const view = render(<CompletionCard card={cardModel(doc)} />)
    const frame = strip(view.lastFrame()!)
    expect(frame).toContain('3 Runs finished · batch abcdef12')
    expect(frame).toContain('2 done · 1 failed')
    expect(frame).toMatch(/✔ coord\s+done\s+1\.2s\s+coord summary/)
    expect(frame).toMatch(/✖ {3}worker-1\s+failed\s+1\.2s\s+tests failed: 3 of 40/)
    expect(frame).toMatch(/↳ report \(2048 B\), \+5 more/)
    expect(frame).toMatch(/✔ {3}worker-2\s+done\s+1m01s\s+budget exceeded; worker-2 summary/)
    expect(frame).toContain('… 2 more not shown')
    expect(frame).toContain('pending: 1 still live (late)')
    expect(frame).toContain('attention: worker-2 followup review.ready: please look')
    expect(frame).toContain('more: actors inspect coord (one Run in detail)')
    view.unmount()
  })

  it('lists under a coordinator the Runs its own waits collected, marked as reported to it', () => {
    const collected = [
      {run: 'fan-1', status: 'done', summary: 'step 1: demo (run fan-1)'},
      {run: 'fan-2', status: 'failed', summary: 'boom\nsecond line'},
    ]
    const view = render(
      <CompletionCard card={cardModel(batch([row('fan', 'done', {collected, collected_total: 5})]))} />,
    )
    const frame = strip(view.lastFrame()!)
    expect(frame).toContain('1 Run finished')
    expect(frame).toMatch(/✔ fan\s+done/)
    expect(frame).toContain('its own wait collected 5 Runs (reported to it):')
    expect(frame).toMatch(/↳ fan-1\s+done\s+step 1: demo \(run fan-1\)/)
    expect(frame).toMatch(/↳ fan-2\s+failed\s+boom second line/)
    expect(frame).toContain('… 3 more')
    view.unmount()
  })

  it('says when nothing finished or the wait timed out', () => {
    const view = render(
      <CompletionCard card={cardModel(batch([], {timed_out: true, hint: 'actors inspect --tree (the forest)'}))} />,
    )
    expect(strip(view.lastFrame()!)).toContain('no finished Runs (timed out) · batch abcdef12')
    view.unmount()
  })
})

describe('wait progress', () => {
  it('tracks pending Runs of the scope and lists each finished one once, in the order they finished', () => {
    const tracker = new WaitTracker({owner: 'default', ids: ['a', 'b']})
    let p = tracker.update({
      runs: [
        summary('a', 'running'),
        summary('b', 'running'),
        summary('c', 'running'),
        summary('x', 'running', {owner: 'other'}),
      ],
    })
    expect(p.pending.map((r) => r.run)).toEqual(['a', 'b'])
    p = tracker.update({
      runs: [summary('a', 'running'), summary('b', 'failed'), summary('b-child', 'running', {root: 'b'})],
    })
    expect(p.pending.map((r) => r.run)).toEqual(['a', 'b-child'])
    expect(p.finished.map((r) => r.run)).toEqual(['b'])
    p = tracker.update({runs: [summary('a', 'done'), summary('b', 'failed'), summary('b-child', 'done', {root: 'b'})]})
    expect(p.pending).toEqual([])
    expect(p.finished.map((r) => r.run)).toEqual(['b', 'a', 'b-child'])
  })

  it('without ids: leaves out silent Runs and, inside a Run, everything but its descendants', () => {
    const everyone = new WaitTracker({owner: 'default'})
    const runs = [summary('a', 'running'), summary('quiet', 'running', {notification: 'silent'})]
    expect(everyone.update({runs}).pending.map((r) => r.run)).toEqual(['a'])
    const inside = new WaitTracker({owner: 'default', within: {run: 'coord'}})
    const tree = [
      summary('coord', 'running'),
      summary('kid', 'running', {parent: 'coord', root: 'coord'}),
      summary('grandkid', 'running', {parent: 'kid', root: 'coord'}),
      summary('stranger', 'running'),
    ]
    expect(inside.update({runs: tree}).pending.map((r) => r.run)).toEqual(['kid', 'grandkid'])
  })

  it('draws finished Runs into scrollback, pending ones live, then the card in place of the live part', () => {
    const clock = {readAt: 0, now: 2000}
    const finished = [{kind: 'finished' as const, run: summary('b', 'failed')}]
    const view = render(<WaitView items={finished} pending={[summary('a', 'running')]} clock={clock} maxPending={10} />)
    let frame = strip(view.lastFrame()!)
    expect(frame).toMatch(/✖ b failed 1\.0s\nwaiting for 1 Run/)
    expect(frame).toMatch(/● a running 3\.0s/)
    const card = {kind: 'card' as const, card: cardModel(batch([row('a', 'done'), row('b', 'failed')]))}
    view.rerender(<WaitView items={[...finished, card]} pending={[]} clock={clock} maxPending={10} />)
    frame = strip(view.lastFrame()!)
    expect(frame).not.toContain('waiting for')
    expect(frame.split('✖ b failed').length - 1).toBe(1)
    expect(frame).toContain('2 Runs finished')
    view.unmount()
  })

  it('counts pending Runs that do not fit', () => {
    const pending = ['a', 'b', 'c', 'd'].map((id) => summary(id, 'running'))
    const view = render(<WaitView items={[]} pending={pending} clock={{readAt: 0, now: 0}} maxPending={2} />)
    const frame = strip(view.lastFrame()!)
    expect(frame).toContain('waiting for 4 Runs')
    expect(frame).toContain('… 2 more')
    expect(frame).not.toContain(' c running')
    view.unmount()
  })
})

describe('now playing', () => {
  const status: PlaybackStatus = {
    state: 'playing',
    index: 2,
    count: 12,
    track: '/music/album/03%20song.flac',
    player: 'mpv',
    volume: 40,
    position_seconds: 63,
    duration_seconds: 252,
    progress_percent: 25,
    position_updated_at_ms: 0,
    updated_at: null,
  }

  it('shows track, index/count, progress bar with position/duration, volume and state', () => {
    const view = render(<NowPlaying model={nowPlayingModel(status, 60)} />)
    const frame = strip(view.lastFrame()!)
    expect(frame).toMatch(/▶ playing\s+03 song\.flac\s+3\/12/)
    expect(frame).toMatch(/━+─+ 1:03 \/ 4:12/)
    expect(frame).toContain('vol 40% · mpv')
    expect(frame).toContain('q quit')
    view.rerender(<NowPlaying model={nowPlayingModel({...status, state: 'paused'}, 60)} message="seek: player busy" />)
    expect(strip(view.lastFrame()!)).toMatch(/‖ paused[\s\S]*seek: player busy/)
    view.unmount()
  })

  it('fills the bar in proportion', () => {
    expect(progressBar(0.25, 8)).toBe('━━──────')
    expect(progressBar(null, 4)).toBe('────')
    expect(progressBar(2, 3)).toBe('━━━')
  })

  it('maps keys to the requests actors control sends', () => {
    expect(keyToCommand(' ', {}, status)).toEqual({action: 'toggle'})
    expect(keyToCommand('n', {}, status)).toEqual({action: 'next'})
    expect(keyToCommand('p', {}, status)).toEqual({action: 'previous'})
    expect(keyToCommand('+', {}, status)).toEqual({action: 'volume', value: '+5'})
    expect(keyToCommand('-', {}, status)).toEqual({action: 'volume', value: '-5'})
    expect(keyToCommand('q', {}, status)).toEqual({action: 'stop'})
    // ∓5 s as a percent of the track: (63 ± 5) / 252.
    expect(keyToCommand('', {rightArrow: true}, status)).toEqual({action: 'seek', value: 27})
    expect(keyToCommand('', {leftArrow: true}, status)).toEqual({action: 'seek', value: 23})
    expect(keyToCommand('', {leftArrow: true}, {...status, position_seconds: 2})).toEqual({action: 'seek', value: 0})
    expect(keyToCommand('', {rightArrow: true}, {...status, duration_seconds: null})).toBeUndefined()
    expect(keyToCommand('x', {}, status)).toBeUndefined()
  })
})
