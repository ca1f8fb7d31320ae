/**
 * inertText, the one escaper of Run-written text on a terminal, and the
 * formatters that route through it: what each character class becomes,
 * what stays, and that tables measure the escaped text, not the raw.
 */
import {describe, expect, it} from 'vitest'
import {formatTable, inertText, printableLine} from '../src/lib/platform/text.js'
import {formatTrackLine} from '../src/lib/present/playback.js'
import {formatLockLine} from '../src/lib/present/locks.js'
import {attentionText} from '../src/lib/view-state/attention-feed.js'
import {nowPlayingModel} from '../src/lib/view-state/now-playing.js'
import type {PlaybackStatus} from '../src/lib/music/types.js'
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
    const text = formatTable(['A', 'B'], [['x', HOSTILE]], 20)
    expect(text).not.toMatch(ACTIVE)
    for (const line of text.split('\n')) expect(line.length).toBeLessThanOrEqual(20)
  })
})

describe('the formatters of Run-written text', () => {
  it('track lines, lock lines and attention lines are inert single lines', () => {
    expect(formatTrackLine(0, 2, `/m/${HOSTILE}\n2.flac`)).toBe(`1/2 /m/${HOSTILE_SHOWN}\\x0a2.flac`)
    const lock = formatLockLine({
      lock: `co\u001b[2J`,
      slots: 1,
      held: 1,
      holders: [{holder: 'run:\u202eb'}],
      queue: [],
    } as never)
    expect(lock).toBe('co\\e[2J  1/1  run:\\u202eb')
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
