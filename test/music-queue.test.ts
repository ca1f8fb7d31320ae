/**
 * Music kernel pieces that need no player: queue building from real files,
 * directories and playlists in a temp dir, player discovery against a real
 * PATH, the command lines of process-controlled players, requests, status
 * projection and checkpoint resume decisions. Plus the CLI's exit codes for
 * a missing source (66) and a missing player (127).
 */
import {mkdirSync, writeFileSync, chmodSync, symlinkSync} from 'node:fs'
import {execFileSync} from 'node:child_process'
import {homedir} from 'node:os'
import {join, relative} from 'node:path'
import {afterEach, beforeEach, describe, expect, it} from 'vitest'
import {isActorsError} from '../src/lib/base/platform/errors.js'
import {resumePoint, type PlaybackCheckpoint} from '../src/lib/services/music/checkpoint.js'
import {buildMpvArgs} from '../src/lib/services/music/mpv-backend.js'
import {buildTrackCommand} from '../src/lib/services/music/player-argv.js'
import {findExecutable, resolvePlayer} from '../src/lib/services/music/players.js'
import {parseM3u, parsePls} from '../src/lib/services/music/playlists.js'
import {buildQueue, naturalCompare, shuffleTracks} from '../src/lib/services/music/queue.js'
import {parsePlaybackRequest} from '../src/lib/services/music/requests.js'
import {projectStatus} from '../src/lib/services/music/status.js'
import {actors, removeDir, tempDir} from './helpers.js'

let dir: string
beforeEach(() => {
  dir = tempDir('actors-music-q-')
})
afterEach(() => removeDir(dir))

function touch(path: string): string {
  mkdirSync(join(path, '..'), {recursive: true})
  // Binary bytes (a WAV header's start): a text file is refused as "not audio".
  writeFileSync(path, Buffer.from('RIFF\0\0\0\0WAVE', 'latin1'))
  return path
}

describe('queue', () => {
  it('walks directories recursively in natural order, audio extensions only', () => {
    for (const name of [
      '10 ten.mp3',
      '2 two.flac',
      '1 one.WAV',
      'notes.txt',
      'cover.jpg',
      'sub/3 three.ogg',
      '.hidden.mp3',
    ])
      touch(join(dir, 'album', name))
    const {tracks, warnings} = buildQueue([join(dir, 'album')])
    expect(tracks.map((t) => relative(join(dir, 'album'), t))).toEqual([
      '1 one.WAV',
      '2 two.flac',
      '10 ten.mp3',
      'sub/3 three.ogg',
    ])
    expect(warnings).toEqual([])
  })

  it('resolves m3u entries against the playlist folder, skipping # lines and warning about missing ones', () => {
    const a = touch(join(dir, 'music', 'a.wav'))
    const b = touch(join(dir, 'music', 'deep', 'b.wav'))
    const list = join(dir, 'music', 'list.m3u8')
    writeFileSync(
      list,
      `#EXTM3U\n#EXTINF:3,A\na.wav\n\n  deep/b.wav  \nmissing.wav\nhttp://radio.example/stream\nfile://${a}\n`,
    )
    const {tracks, warnings} = buildQueue([list], {cwd: '/'})
    expect(tracks).toEqual([a, b, 'http://radio.example/stream', a])
    expect(warnings).toHaveLength(1)
    expect(warnings[0]).toContain(join(dir, 'music', 'missing.wav'))
    expect(warnings[0]).toContain(list)
  })

  it('skips FIFOs and devices (they would block the player) with a warning', () => {
    const a = touch(join(dir, 'm', 'a.wav'))
    execFileSync('mkfifo', [join(dir, 'm', 'pipe.wav')])
    const list = join(dir, 'm', 'list.m3u')
    writeFileSync(list, `a.wav\npipe.wav\n/dev/zero\n`)
    const {tracks, warnings} = buildQueue([list])
    expect(tracks).toEqual([a])
    expect(warnings.filter((w) => w.includes('not a regular file'))).toHaveLength(2)
    expect(buildQueue([join(dir, 'm')]).tracks).toEqual([a])
  })

  it('reads pls playlists in FileN order with relative entries', () => {
    const one = touch(join(dir, 'p', 'one.mp3'))
    const two = touch(join(dir, 'p', 'two.mp3'))
    const pls = join(dir, 'p', 'list.pls')
    writeFileSync(pls, '[playlist]\nFile2=two.mp3\nTitle2=Two\nFile1=one.mp3\nNumberOfEntries=2\n')
    expect(buildQueue([pls]).tracks).toEqual([one, two])
  })

  it('splits | lists, keeps a path that contains |, expands ~ and passes URLs through', () => {
    const a = touch(join(dir, 'a.wav'))
    const b = touch(join(dir, 'b.wav'))
    const piped = touch(join(dir, 'x|y.wav'))
    const {tracks} = buildQueue([`a.wav|b.wav`, 'x|y.wav', 'https://example.org/s.mp3'], {cwd: dir})
    expect(tracks).toEqual([a, b, piped, 'https://example.org/s.mp3'])
    const savedHome = process.env.HOME
    process.env.HOME = dir
    try {
      expect(homedir()).toBe(dir)
      expect(buildQueue(['~/a.wav|~'], {cwd: '/'}).tracks).toEqual([a, a, b, piped])
    } finally {
      process.env.HOME = savedHome
    }
  })

  it('refuses a queue with nothing playable: exit 66 naming the source', () => {
    touch(join(dir, 'empty', 'readme.txt'))
    try {
      buildQueue([join(dir, 'empty'), join(dir, 'nope.mp3')])
      expect.unreachable()
    } catch (error) {
      expect(isActorsError(error) && error.exitCode).toBe(66)
      expect((error as Error).message).toContain(join(dir, 'nope.mp3'))
      expect((error as Error).message).toContain('no audio files')
    }
  })

  it('breaks playlist loops', () => {
    const a = touch(join(dir, 'a.wav'))
    writeFileSync(join(dir, 'self.m3u'), 'a.wav\nself.m3u\n')
    const {tracks, warnings} = buildQueue([join(dir, 'self.m3u')])
    expect(tracks).toEqual([a])
    expect(warnings[0]).toContain('includes itself')
  })

  it('walks a directory with symlink loops once, in bounded time', () => {
    const a = touch(join(dir, 'loop', 'a.wav'))
    for (const name of ['l1', 'l2', 'l3']) symlinkSync('.', join(dir, 'loop', name))
    symlinkSync(join(dir, 'loop'), join(dir, 'loop', 'up'))
    expect(buildQueue([join(dir, 'loop')]).tracks).toEqual([a])
  })

  it('sorts naturally and shuffles to a permutation', () => {
    expect(['t10', 't9', 'T1'].sort(naturalCompare)).toEqual(['T1', 't9', 't10'])
    const items = Array.from({length: 50}, (_, i) => i)
    const shuffled = shuffleTracks(items)
    expect([...shuffled].sort((x, y) => x - y)).toEqual(items)
    expect(shuffled).not.toEqual(items)
  })

  it('parses playlist texts', () => {
    expect(parseM3u('\uFEFF#EXTM3U\r\na.mp3\r\n# c\r\n b.mp3 \r\n')).toEqual(['a.mp3', 'b.mp3'])
    expect(parsePls('[playlist]\nfile3 = c\nFile1=a\nFile2=\n')).toEqual(['a', 'c'])
  })
})

describe('players', () => {
  it('finds executables on PATH only when executable', () => {
    const bin = join(dir, 'bin')
    touch(join(bin, 'mpv'))
    expect(findExecutable('mpv', {PATH: bin})).toBeUndefined()
    chmodSync(join(bin, 'mpv'), 0o755)
    expect(findExecutable('mpv', {PATH: bin})).toBe(join(bin, 'mpv'))
  })

  it('auto picks the first installed player in the platform order and reports what it tried', () => {
    const bin = join(dir, 'bin')
    for (const name of ['ffplay', 'play']) {
      touch(join(bin, name))
      chmodSync(join(bin, name), 0o755)
    }
    const picked = resolvePlayer('auto', 'default', {PATH: bin}, 'linux')
    expect(picked).toMatchObject({name: 'ffplay', tried: ['mpv', 'ffplay']})
    // macOS order puts afplay before ffplay; Windows looks for wmp first.
    expect(resolvePlayer('auto', 'default', {PATH: bin}, 'darwin').tried).toEqual(['mpv', 'afplay', 'ffplay'])
    try {
      resolvePlayer('auto', 'default', {PATH: join(dir, 'none')}, 'linux')
      expect.unreachable()
    } catch (error) {
      expect(isActorsError(error) && error.exitCode).toBe(127)
      expect((error as Error).message).toContain('mpv, ffplay, cvlc, play')
    }
  })

  it('with --output null, auto skips players that cannot play to no device and a named one is refused', () => {
    const bin = join(dir, 'bin')
    touch(join(bin, 'play'))
    chmodSync(join(bin, 'play'), 0o755)
    expect(() => resolvePlayer('auto', 'null', {PATH: bin}, 'linux')).toThrow(/tried: mpv, ffplay, cvlc/)
    try {
      resolvePlayer('play', 'null', {PATH: bin}, 'linux')
      expect.unreachable()
    } catch (error) {
      expect(isActorsError(error) && error.exitCode).toBe(2)
    }
  })

  it('builds the sox play command line: volume before the file, trim after it', () => {
    const cmd = buildTrackCommand('play', {
      executable: '/usr/bin/play',
      track: '/m/a b.flac',
      startSeconds: 12.5,
      volume: 35,
      output: 'default',
    })
    expect(cmd.command).toBe('/usr/bin/play')
    expect(cmd.args).toEqual(['-q', '-v', '0.35', '/m/a b.flac', 'trim', '12.5'])
    expect(
      buildTrackCommand('play', {
        executable: 'play',
        track: '/m/x.wav',
        startSeconds: 0,
        volume: 100,
        output: 'default',
      }).args,
    ).toEqual(['-q', '-v', '1', '/m/x.wav'])
  })

  it('builds ffplay, cvlc, afplay and wmp command lines', () => {
    const o = {executable: 'x', track: "/m/it's.mp3", startSeconds: 30, volume: 40, output: 'null' as const}
    const ff = buildTrackCommand('ffplay', o)
    expect(ff.args).toEqual([
      '-nodisp',
      '-autoexit',
      '-loglevel',
      'error',
      '-volume',
      '40',
      '-ss',
      '30',
      '-i',
      "/m/it's.mp3",
    ])
    expect(ff.env).toEqual({SDL_AUDIODRIVER: 'dummy'})
    expect(buildTrackCommand('cvlc', o).args).toEqual(
      expect.arrayContaining(['--gain=0.4', '--start-time=30', '--aout=dummy', '--', "/m/it's.mp3"]),
    )
    expect(buildTrackCommand('afplay', o).args).toEqual(['-v', '0.4', "/m/it's.mp3"])
    const wmp = buildTrackCommand('wmp', o).args.at(-1)!
    expect(wmp).toContain("$p.URL = '/m/it''s.mp3'")
    expect(wmp).toContain('currentPosition = 30')
  })

  it('gives mpv the whole queue, the IPC socket, the start index and null output', () => {
    const args = buildMpvArgs({
      socket: '/s/mpv.sock',
      playlistFile: '/s/q.m3u',
      at: {index: 2, positionSeconds: 0, paused: false, volume: 55},
      loop: false,
      output: 'null',
    })
    expect(args).toEqual(
      expect.arrayContaining([
        '--input-ipc-server=/s/mpv.sock',
        '--playlist=/s/q.m3u',
        '--playlist-start=2',
        '--volume=55',
        '--loop-playlist=no',
        '--ao=null',
        '--idle=yes',
      ]),
    )
    expect(args.some((a) => a.startsWith('--pause'))).toBe(false)
  })
})

describe('requests, status, resume', () => {
  it('parses actions and values, refusing bad ones with a fix', () => {
    expect(parsePlaybackRequest('seek', '50')).toEqual({action: 'seek', percent: 50})
    expect(parsePlaybackRequest('volume', '+5')).toEqual({action: 'volume', volume: 5, relative: true})
    expect(parsePlaybackRequest('volume', '30%')).toEqual({action: 'volume', volume: 30, relative: false})
    expect(() => parsePlaybackRequest('volume', '130')).toThrow(/0 to 100/)
    expect(() => parsePlaybackRequest('seek', 'x')).toThrow(/percent/)
    expect(() => parsePlaybackRequest('dance')).toThrow(/unknown playback action/)
    expect(() => parsePlaybackRequest('pause', '3')).toThrow(/takes no value/)
  })

  it('projects the position while playing and freezes it while paused', () => {
    const base = {
      state: 'playing' as const,
      index: 0,
      count: 1,
      track: '/a',
      player: 'mpv' as const,
      volume: 70,
      position_seconds: 10,
      duration_seconds: 100,
      progress_percent: null,
      position_updated_at_ms: 1_000_000,
      updated_at: null,
    }
    expect(projectStatus(base, 1_005_000)).toMatchObject({
      position_seconds: 15,
      progress_percent: 15,
      position_updated_at_ms: 1_005_000,
    })
    expect(projectStatus({...base, state: 'paused'}, 1_005_000)).toMatchObject({
      position_seconds: 10,
      progress_percent: 10,
    })
    expect(projectStatus(base, 2_000_000).position_seconds).toBe(100)
  })

  it('resumes at the same track by path, and starts over for another source', () => {
    const checkpoint = {
      source: ['/m'],
      cwd: '/',
      shuffle: false,
      queue: ['/m/1', '/m/2', '/m/3'],
      index: 1,
      track: '/m/2',
      position_seconds: 42,
      paused: true,
      volume: 33,
    } as unknown as PlaybackCheckpoint
    expect(resumePoint(checkpoint, ['/m'], '/', false, ['/m/1', '/m/2', '/m/3'])).toMatchObject({
      index: 1,
      positionSeconds: 42,
      paused: true,
      volume: 33,
    })
    // A track added in front: still the same track.
    expect(resumePoint(checkpoint, ['/m'], '/', false, ['/m/0', '/m/1', '/m/2', '/m/3'])).toMatchObject({
      index: 2,
      positionSeconds: 42,
    })
    expect(resumePoint(checkpoint, ['/other'], '/', false, ['/o/1'])).toMatchObject({
      index: 0,
      positionSeconds: 0,
      paused: false,
    })
  })
})

describe('music CLI exit codes', () => {
  it('missing source: exit 66 naming it', () => {
    const r = actors(dir, ['music', 'play', join(dir, 'nothing-here.mp3'), '--output', 'null'])
    expect(r.code).toBe(66)
    expect(r.stderr).toContain('nothing-here.mp3')
    expect(r.stderr).toContain('fix:')
    expect(r.stderr).not.toMatch(/\n\s+at /)
  })

  it('requested player not installed: exit 127 naming what was tried', () => {
    const track = touch(join(dir, 't.wav'))
    const r = actors(dir, ['music', 'play', track, '--player', 'cvlc', '--json'], {
      env: {PATH: join(dir, 'no-bin') + ':/usr/bin:/bin'},
    })
    if (findExecutable('cvlc')) throw new Error('this test expects cvlc not to be installed')
    expect(r.code).toBe(127)
    expect(r.stderr).toContain('cvlc')
    expect(r.json.error).toMatchObject({exit_code: 127, tried: ['cvlc']})
  })

  it('no player on PATH: exit 127 listing the platform order', () => {
    const track = touch(join(dir, 't.wav'))
    const r = actors(dir, ['music', 'serve', track, '--state-dir', join(dir, 's')], {env: {PATH: join(dir, 'no-bin')}})
    expect(r.code).toBe(127)
    expect(r.stderr).toContain('tried: mpv, ffplay, cvlc, play')
  })

  it('status of a directory no service has used yet answers state "unknown" with exit 0', () => {
    const fresh = join(dir, 'never-served')
    mkdirSync(fresh)
    const r = actors(join(dir, 'home'), ['control', fresh, 'status', '--json'])
    expect(r.code, r.stderr).toBe(0)
    expect(r.json).toMatchObject({state: 'unknown', index: null, count: 0, track: null})
    // Without --json, one readable line rather than a JSON document.
    expect(actors(join(dir, 'home'), ['control', fresh, 'status']).stdout).toBe('unknown\n')
    // Other actions on such a directory are not a playback service's: refused as a bad Run reference.
    expect(actors(join(dir, 'home'), ['control', fresh, 'pause']).code).toBe(2)
  })

  it('a hand-edited checkpoint with impossible values fails closed naming the file (exit 1)', () => {
    const state = join(dir, 'edited')
    mkdirSync(state)
    const checkpoint = {
      schema: 'actors-playback-v1',
      source: [],
      cwd: dir,
      shuffle: false,
      loop: true,
      queue: [],
      index: null,
      paused: false,
      position_seconds: null,
      state: 'stopped',
      volume: 500,
    }
    writeFileSync(join(state, 'playback.json'), JSON.stringify(checkpoint))
    const loud = actors(join(dir, 'home'), ['control', state, 'status', '--json'])
    expect(loud.code).toBe(1)
    expect(loud.stderr).toContain(join(state, 'playback.json'))
    expect(loud.stderr).toContain('volume')
    writeFileSync(join(state, 'playback.json'), JSON.stringify({...checkpoint, volume: 40, state: 'dancing'}))
    expect(actors(join(dir, 'home'), ['control', state, 'status']).stderr).toContain('field "state"')
    writeFileSync(join(state, 'playback.json'), JSON.stringify({...checkpoint, volume: 40}))
    expect(actors(join(dir, 'home'), ['control', state, 'status', '--json']).json).toMatchObject({
      state: 'stopped',
      volume: 40,
    })
  })

  it('refuses a bad ACTORS_MUSIC_OUTPUT with exit 2', () => {
    const track = touch(join(dir, 't.wav'))
    const r = actors(dir, ['music', 'play', track], {env: {ACTORS_MUSIC_OUTPUT: 'speakers'}})
    expect(r.code).toBe(2)
    expect(r.stderr).toContain('ACTORS_MUSIC_OUTPUT')
  })
})
