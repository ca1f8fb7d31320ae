/**
 * Bookkeeping that shrinks (issue 29): after a backlog is reported, what the
 * state root holds outside runs/ is small again as `du -sb` counts it
 * (directory blocks included), because an owner's queue directory that has
 * emptied is replaced by a fresh one. The 20,000-Run figure is in the bench.
 */
import {spawnSync} from 'node:child_process'
import {mkdirSync, readdirSync, statSync, unlinkSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {markerTag} from '../src/lib/kernel/history/index-markers.js'
import {actors, actorsUmask000, homesPerTest, writeFinishedRun} from './helpers.js'

const home = homesPerTest('actors-bookkeeping-')

/** Bytes under `home` outside runs/, as `du -sb` counts them (apparent sizes, directories included). */
function duOutsideRuns(home: string): number {
  const du = (path: string) => Number(spawnSync('du', ['-sb', path], {encoding: 'utf8'}).stdout.split('\t')[0])
  return du(home) - du(join(home, 'runs'))
}

describe('bookkeeping after a backlog is reported', () => {
  it('drains 2,000 Runs; the emptied queue directory is replaced and the root outside runs/ is back under 32 KiB', () => {
    const h = home()
    const base = Date.parse('2026-01-01T00:00:00Z')
    for (let i = 0; i < 2000; i++)
      writeFinishedRun(h, `b-${String(i).padStart(4, '0')}`, {ended: new Date(base + i * 1000).toISOString()})
    const first = actors(h, ['wait', '--json'])
    expect(first.code, first.stderr).toBe(0)
    const queue = join(h, 'index', 'queue', markerTag('default'))
    const grown = statSync(queue)
    // 2,000 markers took far more than a fresh directory's one block.
    expect(grown.size).toBeGreaterThan(16 * 1024)
    let delivered = first.json.members
    for (let i = 0; i < 20 && delivered < 2000; i++) {
      const r = actors(h, ['wait', '--json'])
      expect(r.code, r.stderr).toBe(0)
      delivered += r.json.members
    }
    expect(delivered).toBe(2000)
    expect(actors(h, ['wait', '--json', '--timeout', '0']).json.members).toBe(0)
    const renewed = statSync(queue)
    expect(renewed.ino).not.toBe(grown.ino)
    expect(renewed.size).toBeLessThanOrEqual(4096)
    expect(readdirSync(queue)).toEqual([])
    expect(duOutsideRuns(h)).toBeLessThan(32 * 1024)
    // A Run that ends after the renewal is queued in the fresh directory and delivered as ever.
    writeFinishedRun(h, 'late', {ended: new Date(base + 9_000_000).toISOString()})
    const late = actors(h, ['wait', '--json'])
    expect(late.json.rows.map((row: {run: string}) => row.run)).toEqual(['late'])
  }, 240_000)

  it('renews a grown queue directory as 0700 even under umask 000', () => {
    const h = home()
    expect(actors(h, ['wait', '--json', '--timeout', '0']).code).toBe(0)
    const queue = join(h, 'index', 'queue', markerTag('default'))
    // Grow the directory as a backlog would (names in, then out): its size stays past what a fresh one takes.
    mkdirSync(queue, {recursive: true, mode: 0o700})
    for (let i = 0; i < 600; i++) writeFileSync(join(queue, `grown-${'x'.repeat(40)}-${i}`), '')
    for (const name of readdirSync(queue)) unlinkSync(join(queue, name))
    const grown = statSync(queue)
    expect(grown.size).toBeGreaterThan(16 * 1024)
    writeFinishedRun(h, 'one')
    const r = actorsUmask000(h, ['wait', '--json'])
    expect(r.code, r.stderr).toBe(0)
    const renewed = statSync(queue)
    expect(renewed.ino).not.toBe(grown.ino)
    expect((renewed.mode & 0o777).toString(8)).toBe('700')
  })
})
