/**
 * A second backend for real: ffplay with SDL_AUDIODRIVER=dummy (what
 * `--output null` sets) plays in real time to no device. Pause is SIGSTOP of
 * its process group (the kernel shows state T), play is SIGCONT, next starts
 * a new ffplay for the next track, stop leaves no ffplay behind.
 */
import {spawn, type ChildProcess} from 'node:child_process'
import {existsSync, mkdirSync, readFileSync} from 'node:fs'
import {join} from 'node:path'
import {afterAll, afterEach, beforeAll, describe, expect, it} from 'vitest'
import {
  BIN,
  actors,
  cliEnv,
  processAlive,
  processState,
  readJson,
  tempDir,
  waitFor,
  writeTone,
  removeHome,
} from './helpers.js'

let root: string
const tracks: string[] = []
const children: ChildProcess[] = []

beforeAll(() => {
  root = tempDir('actors-ffplay-')
  mkdirSync(join(root, 'music'))
  for (const [name, freq] of [
    ['a.wav', 440],
    ['b.wav', 660],
  ] as const) {
    tracks.push(writeTone(join(root, 'music', name), 8, freq))
  }
})
afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL')
})
afterAll(() => removeHome(root))

const control = (dir: string, ...args: string[]) => actors(root, ['control', '--json', dir, ...args])

/** The player pid the checkpoint records once it differs from `not`. */
function playerPid(dir: string, not?: number): number | undefined {
  if (!existsSync(join(dir, 'playback-endpoint.json'))) return undefined
  const pid = readJson(join(dir, 'playback.json')).player_process?.pid
  return pid && pid !== not ? pid : undefined
}

describe('music serve with ffplay', () => {
  it('plays, pauses with SIGSTOP, resumes, goes to the next track and stops without an orphan', async () => {
    const dir = join(root, 'state')
    const child = spawn(
      process.execPath,
      [BIN, 'music', 'serve', join(root, 'music'), '--state-dir', dir, '--player', 'ffplay', '--volume', '40'],
      {
        env: cliEnv(root, {ACTORS_MUSIC_OUTPUT: 'null'}),
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    )
    children.push(child)
    let stdout = ''
    child.stdout!.on('data', (d) => (stdout += d))
    const exit = new Promise<number | null>((r) => child.on('exit', (code) => r(code)))

    const first = await waitFor(() => playerPid(dir), 15_000, 'ffplay to start')
    const cmdline = readFileSafe(`/proc/${first}/cmdline`).split('\0')
    expect(cmdline[0]).toMatch(/ffplay$/)
    expect(cmdline).toEqual(expect.arrayContaining(['-volume', '40', tracks[0]]))
    expect(readFileSafe(`/proc/${first}/environ`).split('\0')).toContain('SDL_AUDIODRIVER=dummy')

    let r = control(dir, 'status')
    expect(r.code).toBe(0)
    expect(r.json.status).toMatchObject({
      state: 'playing',
      index: 0,
      count: 2,
      player: 'ffplay',
      track: tracks[0],
      volume: 40,
    })
    expect(r.json.status.duration_seconds).toBeCloseTo(8, 0)

    r = control(dir, 'pause')
    expect(r.code).toBe(0)
    await waitFor(() => processState(first) === 'T', 3000, 'ffplay stopped (T)')
    const paused = control(dir, 'status').json.status
    expect(paused.state).toBe('paused')
    await new Promise((res) => setTimeout(res, 300))
    expect(control(dir, 'status').json.status.position_seconds).toBe(paused.position_seconds)

    expect(control(dir, 'play').code).toBe(0)
    await waitFor(() => processState(first) !== 'T', 3000, 'ffplay continued')
    expect(processAlive(first)).toBe(true)

    r = control(dir, 'next')
    expect(r.code).toBe(0)
    expect(r.json.status).toMatchObject({index: 1, track: tracks[1]})
    const second = await waitFor(() => playerPid(dir, first), 5000, 'a new ffplay for track 2')
    expect(readFileSafe(`/proc/${second}/cmdline`).split('\0')).toContain(tracks[1])
    await waitFor(() => !processAlive(first), 3000, 'the first ffplay to end')

    r = control(dir, 'stop')
    expect(r.code).toBe(0)
    expect(await exit).toBe(0)
    expect(processAlive(second)).toBe(false)
    expect(stdout).toBe(`1/2 ${tracks[0]}\n2/2 ${tracks[1]}\n`)
    expect(readJson(join(dir, 'playback.json'))).toMatchObject({state: 'stopped', index: 1, player: 'ffplay'})
  })
})

function readFileSafe(file: string): string {
  try {
    return readFileSync(file, 'utf8')
  } catch {
    return ''
  }
}
