/**
 * A player that ends or fails always ends `music play`, on a terminal (the
 * now-playing view) and piped; a queue in which nothing played exits 1, not
 * 0; a file that is plainly not audio is refused before any player starts
 * (exit 66, "nothing to play"). Real players on real files: tones made with
 * sox, undecodable files of random bytes, a text file.
 */
import {spawnSync} from 'node:child_process'
import {existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {BIN, actors, removeHome, tempDir, waitFor, writeTone} from './helpers.js'
import {notAudioReason} from '../src/lib/services/music/audio-sniff.js'
import {trackFailure} from '../src/lib/services/music/track-outcome.js'

const SOCKET = `actors-music-ends-${process.pid}`
let root: string

beforeAll(() => {
  root = tempDir('actors-music-ends-')
  mkdirSync(join(root, 'tones'))
  mkdirSync(join(root, 'broken'))
  writeTone(join(root, 'tones', 'short.wav'), 0.4, 440)
  // Random bytes behind audio extensions: every player fails on them, on any machine, with or without a sound device.
  for (const name of ['one.mp3', 'two.mp3'])
    writeFileSync(
      join(root, 'broken', name),
      Buffer.from(Array.from({length: 20_000}, (_, i) => (i * 7919 + 13) % 251)),
    )
  writeFileSync(join(root, 'notes.txt'), 'not a song\n')
  writeFileSync(join(root, 'text.mp3'), 'hello, I only look like an mp3\n')
})
afterAll(() => {
  spawnSync('tmux', ['-L', SOCKET, 'kill-server'])
  removeHome(root)
})

/** The pids of processes whose command line mentions `needle` (our temp dir: only this test's players). */
function playersOn(needle: string): number[] {
  const pids: number[] = []
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0')
      if (/(ffplay|mpv|play)$/.test(cmdline[0]) && cmdline.some((arg) => arg.includes(needle))) pids.push(Number(entry))
    } catch {}
  }
  return pids
}

/**
 * Run `actors ARGS` on a real terminal (tmux, CI unset: the Ink view); resolves
 * with its exit code and the milliseconds from the last player's end to the exit.
 */
async function playOnTerminal(
  name: string,
  args: string[],
  needle: string,
): Promise<{code: number; afterPlayerMs: number | undefined}> {
  const done = join(root, `${name}.exit`)
  const quoted = args.map((a) => `'${a}'`).join(' ')
  const script = `env -u CI ACTORS_HOME='${root}/home' TERM=xterm-256color '${process.execPath}' '${BIN}' ${quoted}; echo $? > '${done}.tmp'; mv '${done}.tmp' '${done}'; sleep 600`
  spawnSync('tmux', ['-L', SOCKET, 'new-session', '-d', '-x', '100', '-y', '20', '-s', name, script])
  let lastPlayerSeen: number | undefined
  const exitedAt = await waitFor(
    () => {
      if (playersOn(needle).length > 0) lastPlayerSeen = Date.now()
      return existsSync(done) ? Date.now() : undefined
    },
    40_000,
    `${args.join(' ')} to exit on a terminal (it hangs once the player is gone)`,
  )
  spawnSync('tmux', ['-L', SOCKET, 'kill-session', '-t', name])
  // A player that fails at once may never be seen; then only the exit itself is asserted.
  return {
    code: Number(readFileSync(done, 'utf8').trim()),
    afterPlayerMs: lastPlayerSeen === undefined ? undefined : exitedAt - lastPlayerSeen,
  }
}

describe('music play ends when the player ends', () => {
  it('ffplay: the queue ends and the now-playing view exits 0 right after the player', async () => {
    const r = await playOnTerminal(
      'ffplay',
      ['music', 'play', join(root, 'tones'), '--no-loop', '--player', 'ffplay', '--output', 'null'],
      join(root, 'tones'),
    )
    expect(r.code).toBe(0)
    expect(r.afterPlayerMs).toBeLessThan(10_000)
    console.log(`ffplay: play exited ${r.afterPlayerMs} ms after the player ended`)
  })

  it('sox play: every track failing ends the view with exit 1', async () => {
    const r = await playOnTerminal(
      'sox',
      ['music', 'play', join(root, 'broken'), '--no-loop', '--player', 'play'],
      join(root, 'broken'),
    )
    expect(r.code).toBe(1)
    if (r.afterPlayerMs !== undefined) expect(r.afterPlayerMs).toBeLessThan(10_000)
    console.log(`sox play: play exited ${r.afterPlayerMs} ms after the last player failed`)
  })

  it('mpv: every track skipped is exit 1 naming why, not 0', () => {
    const r = actors(root, ['music', 'play', join(root, 'broken'), '--no-loop', '--player', 'mpv', '--output', 'null'])
    expect(r.code).toBe(1)
    expect(r.stderr).toContain('mpv could not play entry 1')
    expect(r.stderr).toMatch(/playback failed: nothing played: mpv could not play any of 2 tracks/)
    expect(r.stderr).toContain('fix:')
    expect(r.stderr).not.toMatch(/\n\s+at /)
  })

  it('ffplay: a file it cannot open is a failure although ffplay exits 0', () => {
    const r = actors(root, [
      'music',
      'play',
      join(root, 'broken', 'one.mp3'),
      '--no-loop',
      '--player',
      'ffplay',
      '--output',
      'null',
    ])
    expect(r.code).toBe(1)
    expect(r.stderr).toContain(`ffplay could not play ${join(root, 'broken', 'one.mp3')} (exit code 0:`)
  })

  it('a real tone still plays and exits 0', () => {
    const r = actors(root, ['music', 'play', join(root, 'tones'), '--no-loop', '--player', 'mpv', '--output', 'null'])
    expect(r.code).toBe(0)
    expect(r.stderr).toContain('playback ended')
  })
})

describe('a file that is not audio', () => {
  it('is refused before any player starts: exit 66 naming the file and what it is', () => {
    const r = actors(root, [
      'music',
      'play',
      join(root, 'notes.txt'),
      join(root, 'text.mp3'),
      '--player',
      'ffplay',
      '--output',
      'null',
    ])
    expect(r.code).toBe(66)
    expect(r.stderr).toContain(`${join(root, 'notes.txt')}: not audio (a text file), skipped`)
    expect(r.stderr).toContain(`${join(root, 'text.mp3')}: not audio (a text file), skipped`)
    expect(r.stderr).toContain('fix:')
    expect(r.stdout).toBe('')
  })

  it('is skipped beside real tracks, which play', () => {
    const r = actors(root, [
      'music',
      'play',
      `${join(root, 'notes.txt')}|${join(root, 'tones', 'short.wav')}`,
      '--no-loop',
      '--player',
      'mpv',
      '--output',
      'null',
    ])
    expect(r.code).toBe(0)
    expect(r.stderr).toContain('not audio (a text file), skipped')
    expect(r.stdout).toBe(`1/1 ${join(root, 'tones', 'short.wav')}\n`)
  })

  it('is told by its first bytes: text, images, archives, empty; audio and unknown binary pass', () => {
    const file = (name: string, bytes: Buffer | string) => {
      writeFileSync(join(root, name), bytes)
      return notAudioReason(join(root, name))
    }
    expect(file('e.mp3', '')).toBe('an empty file')
    expect(file('p.mp3', Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0]))).toBe('a PNG image')
    expect(file('u.mp3', 'é'.repeat(400))).toBe('a text file')
    expect(notAudioReason(join(root, 'tones', 'short.wav'))).toBeUndefined()
    expect(notAudioReason(join(root, 'broken', 'one.mp3'))).toBeUndefined()
  })

  it("reads ffplay's own error lines, since its exit code is always 0", () => {
    const base = {player: 'ffplay' as const, track: '/m/a.mp3', code: 0, signal: null}
    expect(trackFailure({...base, stderr: ''})).toBeUndefined()
    expect(
      trackFailure({
        ...base,
        stderr: "ALSA lib pcm.c:2666 Unknown PCM default\nFailed to open file '/m/a.mp3' or configure filtergraph\n",
      }),
    ).toMatch(/Failed to open file/)
    expect(trackFailure({...base, stderr: '/m/a.mp3: Invalid data found when processing input\n'})).toBe(
      'exit code 0: /m/a.mp3: Invalid data found when processing input',
    )
    expect(
      trackFailure({...base, player: 'play', code: 1, stderr: 'ALSA lib x\nplay FAIL sox: no default audio device\n'}),
    ).toBe('exit code 1: play FAIL sox: no default audio device')
  })
})
