/**
 * inertText, the one escaper of Run-written text on a terminal, and the
 * formatters that route through it: what each character class becomes,
 * what stays, and that tables measure the escaped text, not the raw.
 */
import {describe, expect, it} from 'vitest'
import {foldedLine, formatTable, inertText, printableLine} from '../src/lib/base/platform/text.js'
import {renderBatchPlain} from '../src/lib/surface/present/batch-card.js'
import {cardModel} from '../src/lib/services/view-state/card-model.js'
import {rowCells} from '../src/lib/services/view-state/run-rows.js'
import type {BatchDocument} from '../src/lib/services/wait/batch.js'
import {formatTrackLine} from '../src/lib/surface/present/playback.js'
import {formatLockTable} from '../src/lib/surface/present/locks.js'
import {attentionText} from '../src/lib/services/view-state/attention-feed.js'
import {nowPlayingModel} from '../src/lib/services/view-state/now-playing.js'
import type {PlaybackStatus} from '../src/lib/services/music/types.js'
import {ACTIVE, HOSTILE, HOSTILE_SHOWN} from './inert-support.js'

describe('inertText', () => {
  it('escapes ESC as \\e, other C0 and DEL as \\xNN, C1 and bidi controls as \\uNNNN', () => {
    expect(inertText(HOSTILE)).toBe(HOSTILE_SHOWN)
    expect(inertText('\u0000\u0001\u0007\u0008\r\u000b\u000c\u001f\u007f')).toBe(
      '\\x00\\x01\\x07\\x08\\x0d\\x0b\\x0c\\x1f\\x7f',
    )
    expect(inertText('\u0080\u009b\u009d\u009f')).toBe('\\u0080\\u009b\\u009d\\u009f')
    const bidi = '\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069'
    expect(inertText(bidi)).toBe('\\u061c\\u200e\\u200f\\u202a\\u202b\\u202c\\u202d\\u202e\\u2066\\u2067\\u2068\\u2069')
  })

  it('escapes newline and tab in one-line text, keeps them in multi-line text', () => {
    expect(inertText('a\nb\tc')).toBe('a\\x0ab\\x09c')
    expect(inertText('a\nb\tc\u001b[2J', {multiline: true})).toBe('a\nb\tc\\e[2J')
    expect(inertText('a\r\nb', {multiline: true})).toBe('a\\x0d\nb')
  })

  it('leaves printable text alone, non-ASCII included, and is idempotent', () => {
    const plain = 'build-1 ✔ café 日本語 🎵 ├─ … \\e already a backslash'
    expect(inertText(plain)).toBe(plain)
    expect(inertText(inertText(HOSTILE))).toBe(HOSTILE_SHOWN)
    for (let code = 0; code < 0x3000; code++) {
      const shown = inertText(String.fromCharCode(code))
      expect(ACTIVE.test(shown), `U+${code.toString(16)}`).toBe(false)
    }
  })
})

describe('printableLine', () => {
  it('folds white space into one line, escapes the rest and cuts after escaping', () => {
    expect(printableLine(`a\n\tb ${HOSTILE}`)).toBe(`a b ${HOSTILE_SHOWN}`)
    expect(printableLine('\u001b'.repeat(10), 8)).toBe('\\e\\e\\e\\…')
  })
})

describe('foldedLine', () => {
  it('folds and cuts but escapes nothing: documents keep what the Run wrote', () => {
    expect(foldedLine(`a\n b ${HOSTILE}`)).toBe(`a b ${HOSTILE}`)
  })
})

/** A batch whose every Run-written field is hostile: names, summaries, kinds, collected Runs, pending names. */
function hostileBatch(): BatchDocument {
  const row = {
    run: 'f\u001b[2Jn',
    run_instance_id: 'i',
    generation: 1,
    status: 'done',
    depth: 0,
    parent: null,
    summary: HOSTILE,
    output: '',
    artifacts: [{name: 'a\u0007rt', path: '/x', bytes: 1, sha256: null}],
    artifacts_total: 1,
    usage: null,
    collected: [{run: 'c\u202e1', status: 'done', summary: HOSTILE}],
    collected_total: 1,
    exit_code: 0,
    duration_ms: 1,
    ended_at: null,
    state_dir: '/s',
  }
  return {
    batch_id: 'abcdef1234567890',
    members: 1,
    counts: {done: 1},
    rows: [row],
    overflow: 0,
    deferred: 0,
    pending: [{run: 'p\u009b', run_instance_id: 'j', status: 'running'}],
    pending_count: 1,
    unknown: [],
    already_reported: [],
    attention: [
      {run: 'f', run_instance_id: 'i', event_id: 'e', kind: 'k\u001b', summary: HOSTILE, attention: 'notify', ts: ''},
    ],
    timed_out: false,
    redelivered: false,
    hint: 'actors inspect f',
  } as unknown as BatchDocument
}

/** Every string inside `value`. */
function strings(value: unknown): string[] {
  if (typeof value === 'string') return [value]
  if (value && typeof value === 'object') return Object.values(value).flatMap(strings)
  return []
}

describe('the completion cards', () => {
  it('plain: every line inert, the collected names measured as printed', () => {
    const text = renderBatchPlain(hostileBatch())
    expect(text).not.toMatch(ACTIVE)
    expect(text).toContain(`  f\\e[2Jn  done`)
    expect(text).toContain(`↳ c\\u202e1  done      ${HOSTILE_SHOWN}`)
    expect(text).toContain(`attention: f notify k\\e: ${HOSTILE_SHOWN}`)
    expect(text).toContain('pending: 1 still live (p\\u009b)')
  })

  it('Ink: the card model holds nothing a terminal acts on', () => {
    const model = cardModel(hostileBatch())
    // Drawn as they are: a row's React key is never shown, and CompletionCard escapes collected summaries itself.
    const drawn = model.rows.map(({key, collected, ...shown}) => ({...shown, runs: collected?.runs.map((r) => r.run)}))
    for (const text of strings({...model, rows: drawn})) expect(text).not.toMatch(ACTIVE)
    expect(model.rows[0]!.run).toBe('f\\e[2Jn')
    expect(model.rows[0]!.summary).toBe(HOSTILE_SHOWN)
    expect(model.rows[0]!.collected!.runs[0]!.run).toBe('c\\u202e1')
  })
})

describe('formatTable', () => {
  it('measures the escaped cell, so every column still lines up', () => {
    const text = formatTable(
      ['NAME', 'WHAT', 'MORE'],
      [
        ['a', `x\u001b[2Jy`, 'end'],
        ['b', 'plain', 'end'],
      ],
    )
    expect(text).not.toMatch(ACTIVE)
    const lines = text.split('\n')
    expect(lines[1]).toBe('a     x\\e[2Jy  end')
    expect(lines.map((line) => line.indexOf('end'))).toEqual([-1, 15, 15])
    expect(lines[0]!.indexOf('MORE')).toBe(15)
  })

  it('cuts escaped cells to the width like any other', () => {
    const text = formatTable(['A', 'B'], [['x', HOSTILE]], 20, {free: ['B']})
    expect(text).not.toMatch(ACTIVE)
    for (const line of text.split('\n')) expect(line.length).toBeLessThanOrEqual(20)
  })
})

describe('rowCells', () => {
  it('gives both Run tables (plain and Ink) inert cells to measure, in either layout', () => {
    const row = {
      key: 'k',
      prefix: '├─ ',
      run: 'r\u001b[2J',
      recipe: 'x\u202e',
      status: 'running',
      started_at: null,
      duration_ms: null,
      parent: 'p\u0007',
      usage: '',
      command: HOSTILE,
    }
    const clock = {now: 0, readAt: 0}
    const table = rowCells(row, 'table', clock)
    expect(table).toEqual(['├─ r\\e[2J', 'x\\u202e', 'running', '-', '-', '-', '-', '-', HOSTILE_SHOWN, 'p\\x07'])
    expect(rowCells(row, 'tree', clock)).toEqual(['├─ r\\e[2J', 'running', '-', '-', 'x\\u202e'])
  })
})

describe('the formatters of Run-written text', () => {
  it('track lines, lock lines and attention lines are inert single lines', () => {
    expect(formatTrackLine(0, 2, `/m/${HOSTILE}\n2.flac`)).toBe(`1/2 /m/${HOSTILE_SHOWN}\\x0a2.flac`)
    const lock = formatLockTable([
      {
        lock: `co\u001b[2J`,
        slots: 1,
        held: 1,
        holders: [{holder: 'run:\u202eb'}],
        queue: [],
      } as never,
    ])
    expect(lock.split('\n')[1]).toBe('co\\e[2J  1/1   run:\\u202eb  -')
    const note = {
      run: 'r',
      event_id: 'e',
      ts: '',
      kind: 'x\u009b',
      summary: `${HOSTILE}\nnext`,
      attention: 'notify',
    } as const
    expect(attentionText(note)).toBe(`r notify x\\u009b: ${HOSTILE_SHOWN} next`)
  })

  it('the now-playing view shows a track name inert, also one whose URL decodes to ESC', () => {
    const status = {state: 'playing', index: 0, count: 1, track: 'http://h/a%1b%5b2Jb.mp3'} as Partial<PlaybackStatus>
    const model = nowPlayingModel(
      {
        volume: null,
        position_seconds: null,
        duration_seconds: null,
        progress_percent: null,
        ...status,
      } as PlaybackStatus,
      80,
    )
    expect(model.title).toBe('a\\e[2Jb.mp3')
    expect(`${model.title} ${model.source}`).not.toMatch(ACTIVE)
  })
})
