/**
 * Track names that a line of mpv's m3u queue cannot hold as they are (a
 * newline, a carriage return): the queue keeps one entry per
 * track and mpv opens each by its real name. Real mpv (`--output null`) on
 * sox tones, checked over mpv's own IPC socket.
 */
import {spawn} from 'node:child_process'
import {existsSync, mkdirSync} from 'node:fs'
import {join} from 'node:path'
import {afterAll, describe, expect, it} from 'vitest'
import {m3uEntry} from '../src/lib/services/music/mpv-backend.js'
import {MpvIpcClient} from '../src/lib/services/music/mpv-ipc.js'
import {BIN, actors, cliEnv, readJson, removeHome, tempDir, waitFor, writeTone} from './helpers.js'

const root = tempDir('actors-track-names-')
afterAll(() => removeHome(root))

describe('m3uEntry', () => {
  it('leaves plain names alone and writes the others so mpv reads them back whole', () => {
    expect(m3uEntry('/music/1 low.wav')).toBe('/music/1 low.wav')
    expect(m3uEntry('https://radio.example/stream')).toBe('https://radio.example/stream')
    expect(m3uEntry('/music/a\nb.wav')).toBe('file:///music/a%0Ab.wav')
    expect(m3uEntry('/music/song.wav ')).toBe('file:///music/song.wav%20')
    expect(m3uEntry('https://x.example/a\r\nb')).toBe('https://x.example/a%0D%0Ab')
    expect(m3uEntry('#tag.wav')).toBe('%23tag.wav')
  })
})

describe('music serve with mpv and odd track names', () => {
  it('a track named with a newline is one entry of the queue, played under its own name', async () => {
    const music = join(root, 'music')
    mkdirSync(music)
    const names = ['a\nb.wav', 'c.wav', 'd\r.wav']
    const tracks = names.map((name, i) => writeTone(join(music, name), 5, 330 + 110 * i))
    const dir = join(root, 'state')
    const child = spawn(process.execPath, [BIN, 'music', 'serve', ...tracks, '--state-dir', dir, '--output', 'null'], {
      env: cliEnv(root),
      stdio: 'ignore',
    })
    try {
      await waitFor(
        () =>
          existsSync(join(dir, 'playback-endpoint.json')) && readJson(join(dir, 'playback.json')).state === 'playing',
        15_000,
        'playback service ready',
      )
      const ipc = await MpvIpcClient.connect(join(dir, 'mpv.sock'))
      try {
        expect(await ipc.get('playlist-count')).toBe(3)
        // mpv opened the first track by its real name (the queue file's line decoded back).
        expect(await ipc.get('stream-open-filename')).toBe(tracks[0])
        const status = actors(root, ['control', '--json', dir, 'status'])
        expect(status.json).toMatchObject({index: 0, count: 3, track: tracks[0]})
        for (let i = 0; i < 2; i++) {
          const next = actors(root, ['control', '--json', dir, 'next'])
          expect(next.code, next.stderr).toBe(0)
        }
        await waitFor(async () => (await ipc.get('stream-open-filename')) === tracks[2], 10_000, 'third track open')
      } finally {
        ipc.close()
      }
    } finally {
      child.kill('SIGTERM')
    }
  })
})
