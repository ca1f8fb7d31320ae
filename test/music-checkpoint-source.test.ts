/**
 * The playback checkpoint belongs to the source, not to its spelling:
 * `/abs/dir`, `/abs/dir/`, a relative path from another cwd and a symlink to
 * the directory all resume at the same track. A second `serve` refused with
 * exit 5 says nothing about resuming and leaves every file of the live
 * service as it was. Real mpv (`--output null`) on sox tones.
 */
import {spawn, type ChildProcess} from 'node:child_process'
import {existsSync, mkdirSync, readFileSync, readdirSync, realpathSync, statSync, symlinkSync} from 'node:fs'
import {join} from 'node:path'
import {afterAll, afterEach, beforeAll, describe, expect, it} from 'vitest'
import {sourceKey} from '../src/lib/services/music/source-key.js'
import {BIN, actors, cliEnv, readJson, removeHome, tempDir, waitFor, writeTone} from './helpers.js'

let root: string
let music: string
const tracks: string[] = []
const children: ChildProcess[] = []

beforeAll(() => {
  root = tempDir('actors-music-source-')
  music = join(root, 'music')
  mkdirSync(music)
  for (const [name, freq] of [
    ['1 low.wav', 330],
    ['2 mid.wav', 440],
    ['3 high.wav', 550],
  ] as const)
    tracks.push(writeTone(join(music, name), 20, freq))
  symlinkSync(music, join(root, 'linked'))
})
afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL')
})
afterAll(() => removeHome(root))

/** `actors music serve SOURCE --state-dir DIR` in the background, from `cwd`. */
function serve(source: string, dir: string, cwd = root) {
  const child = spawn(
    process.execPath,
    [BIN, 'music', 'serve', source, '--state-dir', dir, '--player', 'mpv', '--output', 'null'],
    {
      cwd,
      env: cliEnv(root),
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  )
  children.push(child)
  let err = ''
  child.stderr!.on('data', (d) => (err += d))
  const exit = new Promise<number | null>((r) => child.on('exit', (code) => r(code)))
  return {stderr: () => err, exit}
}

/** The service on `dir` is playing (its endpoint is up and the checkpoint says so). */
function playing(dir: string) {
  return waitFor(
    () =>
      existsSync(join(dir, 'playback-endpoint.json')) &&
      readJson(join(dir, 'playback.json')).state === 'playing' &&
      readJson(join(dir, 'playback.json')),
    20_000,
    'the service to play',
  )
}

const control = (dir: string, ...args: string[]) => actors(root, ['control', '--json', dir, ...args])

describe('the checkpoint is keyed by the real path of the source', () => {
  it('resumes at the same track however the directory is spelled', async () => {
    const dir = join(root, 'state')
    const first = serve(music, dir)
    await playing(dir)
    expect(control(dir, 'next').code).toBe(0)
    expect(control(dir, 'stop').code).toBe(0)
    expect(await first.exit).toBe(0)
    expect(readJson(join(dir, 'playback.json'))).toMatchObject({index: 1, track: tracks[1], state: 'stopped'})

    // A trailing slash, a relative path from the parent, a symlink: the same source.
    for (const [source, cwd] of [
      [`${music}/`, root],
      ['music', root],
      ['./linked/', root],
      ['../music', join(root, 'linked')],
    ] as const) {
      const again = serve(source, dir, cwd)
      const checkpoint = await playing(dir)
      expect(again.stderr()).toContain('resuming at track 2/3')
      expect(again.stderr()).not.toContain('another source')
      expect(checkpoint.index).toBe(1)
      expect(realpathSync(checkpoint.track)).toBe(realpathSync(tracks[1]))
      expect(control(dir, 'stop').code).toBe(0)
      expect(await again.exit).toBe(0)
    }
    expect(sourceKey([`${music}/`], '/')).toEqual([music])
    expect(sourceKey(['https://radio.example/a'], root)).toEqual(['https://radio.example/a'])
  })

  it('another directory is another source', async () => {
    const dir = join(root, 'state-other')
    const first = serve(tracks[2], dir)
    await playing(dir)
    expect(control(dir, 'stop').code).toBe(0)
    await first.exit
    const other = serve(music, dir)
    const checkpoint = await playing(dir)
    expect(other.stderr()).toContain('the checkpoint is for another source')
    expect(checkpoint).toMatchObject({index: 0})
    expect(control(dir, 'stop').code).toBe(0)
    expect(await other.exit).toBe(0)
  })
})

describe('a refused second serve', () => {
  it("exits 5 saying nothing about resuming, and changes none of the live one's files", async () => {
    const dir = join(root, 'state-twice')
    const first = serve(music, dir)
    await playing(dir)
    expect(control(dir, 'next').code).toBe(0)
    expect(control(dir, 'stop').code).toBe(0)
    await first.exit
    const live = serve(music, dir)
    await playing(dir)
    expect(live.stderr()).toContain('resuming at track 2/3')
    // Paused, the live service rewrites nothing by itself: any change below would be the refused one's.
    expect(control(dir, 'pause').code).toBe(0)
    const snapshot = () =>
      readdirSync(dir)
        .sort()
        .map((name) => ({
          name,
          mtime: statSync(join(dir, name)).mtimeMs,
          text: statSync(join(dir, name)).isFile() ? readFileSync(join(dir, name), 'utf8') : '',
        }))
    const before = snapshot()
    const r = actors(root, ['music', 'serve', music, '--state-dir', dir, '--player', 'mpv', '--output', 'null'])
    expect(r.code).toBe(5)
    expect(r.stderr).toContain('already runs')
    expect(r.stderr).not.toMatch(/resum|checkpoint/)
    expect(snapshot()).toEqual(before)
    expect(control(dir, 'stop').code).toBe(0)
    expect(await live.exit).toBe(0)
  })
})
