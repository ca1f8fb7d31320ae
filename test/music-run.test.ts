/**
 * The playback service as a Run (recipes/music/playback): launched with
 * `actors run`, controlled with `actors control RUN ...` through the Run's
 * control endpoint, checked against mpv's own state. The declared `pause`
 * reaches the player (mpv's pause property), not the kernel's SIGSTOP;
 * playback events land in the Run's Trace; `stop` leaves no mpv behind.
 */
import {existsSync, readFileSync} from 'node:fs'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {MpvIpcClient} from '../src/lib/services/music/mpv-ipc.js'
import {actors, processAlive, readJson, tempDir, waitFor, waitForResult, writeTone, removeHome} from './helpers.js'
import {isPaused} from './frozen.js'

let home: string
const tracks: string[] = []

beforeAll(() => {
  home = tempDir('actors-music-run-')
  for (const [name, freq] of [
    ['a.wav', 440],
    ['b.wav', 550],
  ] as const) {
    tracks.push(writeTone(join(home, name), 10, freq))
  }
})
afterAll(() => removeHome(home))

describe('recipes/music/playback as a Run', () => {
  it('serves its declared controls through the Run endpoint and traces playback events', async () => {
    const launch = actors(home, [
      'run',
      'music/playback',
      `source=${tracks.join('|')}`,
      'output=null',
      'volume=40',
      '--name',
      'player',
      '--json',
    ])
    expect(launch.code).toBe(0)
    const dir = launch.json.state_dir
    const checkpoint = await waitFor(
      () => {
        if (!existsSync(join(dir, 'control-endpoint.json'))) return undefined
        const c = readJson(join(dir, 'playback.json'))
        return c.state === 'playing' && c.player_process?.pid ? c : undefined
      },
      20_000,
      'the playback Run to be playing',
    )
    const mpvPid = checkpoint.player_process.pid
    // A Run serves the control plane's endpoint, not a standalone one.
    expect(existsSync(join(dir, 'playback-endpoint.json'))).toBe(false)
    const ipc = await MpvIpcClient.connect(join(dir, 'mpv.sock'))
    expect(await ipc.get('volume')).toBe(40)

    let r = actors(home, ['control', 'player', 'volume', '20', '--json'])
    expect(r.code).toBe(0)
    expect(await ipc.get('volume')).toBe(20)

    r = actors(home, ['control', 'player', 'pause', '--json'])
    expect(r.code).toBe(0)
    expect(await ipc.get('pause')).toBe(true)
    // The service paused its player; the kernel did not SIGSTOP anything.
    expect(isPaused(mpvPid)).toBe(false)

    // resume is play's alias: the service un-pauses its player (the kernel's SIGCONT would leave it paused).
    r = actors(home, ['control', 'player', 'resume', '--json'])
    expect(r.code, r.stderr).toBe(0)
    expect(r.json).toMatchObject({handled_by: 'service', reply: {ok: true, status: {state: 'playing'}}})
    expect(await ipc.get('pause')).toBe(false)
    expect(actors(home, ['control', 'player', 'pause']).code).toBe(0)

    // A bad value is refused before anything is sent (exit 2): no journal record, the player untouched.
    const journalBefore = readFileSync(join(dir, 'controls.jsonl'), 'utf8')
    for (const [action, value] of [
      ['volume', '150'],
      ['seek', 'loud'],
      ['pause', 'now'],
    ]) {
      r = actors(home, ['control', 'player', action, value, '--json'])
      expect([action, value, r.code]).toEqual([action, value, 2])
      expect(r.json.error.message).toContain(action)
    }
    expect(readFileSync(join(dir, 'controls.jsonl'), 'utf8')).toBe(journalBefore)
    expect(await ipc.get('volume')).toBe(20)

    r = actors(home, ['control', 'player', 'next', '--json'])
    expect(r.code).toBe(0)
    expect(await ipc.get('playlist-pos')).toBe(1)

    r = actors(home, ['control', '--json', 'player', 'status'])
    expect(r.code).toBe(0)
    expect(r.json.service).toMatchObject({
      ok: true,
      status: {state: 'paused', index: 1, count: 2, volume: 20, player: 'mpv'},
    })
    // Merged with the kernel's view: playback fields at the top level, the kernel's own status kept.
    expect(r.json).toMatchObject({status: 'running', state: 'paused', index: 1, count: 2, volume: 20})

    r = actors(home, ['control', 'player', 'stop', '--json'])
    expect(r.code).toBe(0)
    // The service handled the stop itself; the Run still records what the user did.
    expect(r.json).toMatchObject({handled_by: 'service', status: 'cancelled'})
    expect(await waitForResult(dir)).toMatchObject({status: 'cancelled'})
    expect(processAlive(mpvPid)).toBe(false)
    ipc.close()

    const kinds = readFileSync(join(dir, 'trace.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l).kind)
    expect(kinds).toEqual(expect.arrayContaining(['music.track', 'music.volume', 'music.pause', 'music.stop']))
    expect(readJson(join(dir, 'playback.json'))).toMatchObject({state: 'stopped', index: 1, volume: 20})

    // A finished playback Run still says where it stopped: the last known state from its checkpoint.
    r = actors(home, ['control', 'player', 'status', '--json'])
    expect(r.code).toBe(0)
    expect(r.json).toMatchObject({
      status: 'cancelled',
      state: 'stopped',
      index: 1,
      count: 2,
      volume: 20,
      player: 'mpv',
      track: tracks[1],
    })
    expect(r.json.service).toMatchObject({ok: true, source: 'checkpoint'})
    expect(actors(home, ['control', 'player', 'status']).stdout).toContain('playback:    stopped 2/2')
  })
})
