/**
 * The playback service with real mpv (`--output null`) on sox tones. Every
 * control goes through the real `actors control DIR ...` and is checked
 * against mpv's own state over its IPC socket (pause, volume, time-pos,
 * playlist-pos), not only against our status. Also: checkpoint resume, a
 * corrupt checkpoint, a foreign service_instance_id, no orphan player after
 * stop or a signal, and `music play`'s plain lines.
 */
import {spawn, type ChildProcess} from 'node:child_process'
import {existsSync, mkdirSync, readFileSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {afterAll, afterEach, beforeAll, describe, expect, it} from 'vitest'
import {MpvIpcClient} from '../src/lib/services/music/mpv-ipc.js'
import {sendPlaybackRequest} from '../src/lib/services/music/playback-kind.js'
import {readProcessIdentity} from '../src/lib/base/platform/process-identity.js'
import {BIN, actors, cliEnv, processAlive, readJson, tempDir, waitFor, writeTone, removeHome} from './helpers.js'

let root: string
let music: string
const tracks: string[] = []
const children: ChildProcess[] = []

beforeAll(() => {
  root = tempDir('actors-mpv-')
  music = join(root, 'music')
  mkdirSync(music)
  // Named so that natural order differs from plain string order (10 after 2).
  for (const [name, freq] of [
    ['1 low.wav', 330],
    ['2 mid.wav', 440],
    ['10 high.wav', 550],
  ] as const) {
    tracks.push(writeTone(join(music, name), 10, freq))
  }
})

afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL')
})
afterAll(() => removeHome(root))

interface Served {
  child: ChildProcess
  stdout: () => string
  stderr: () => string
  exit: Promise<number | null>
}

/** Start `actors music serve` in the background (the real CLI). */
function serve(args: string[], env: NodeJS.ProcessEnv = {}): Served {
  const child = spawn(process.execPath, [BIN, 'music', 'serve', ...args, '--output', 'null'], {
    env: cliEnv(root, env),
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  children.push(child)
  let out = ''
  let err = ''
  child.stdout!.on('data', (d) => (out += d))
  child.stderr!.on('data', (d) => (err += d))
  const exit = new Promise<number | null>((r) => child.on('exit', (code) => r(code)))
  return {child, stdout: () => out, stderr: () => err, exit}
}

/** Wait until the service is up: endpoint published and mpv's pid checkpointed. */
async function ready(dir: string, served?: Served): Promise<{pid: number; ipc: MpvIpcClient}> {
  const up = waitFor(
    () => {
      if (!existsSync(join(dir, 'playback-endpoint.json'))) return undefined
      const c = readJson(join(dir, 'playback.json'))
      return c.player_process?.pid && c.state === 'playing' ? c : undefined
    },
    15_000,
    'playback service ready',
  )
  const died = served?.exit.then((code) => {
    throw new Error(`service exited ${code}: ${served.stderr()}`)
  })
  const checkpoint = await (died ? Promise.race([up, died]) : up)
  const ipc = await MpvIpcClient.connect(join(dir, 'mpv.sock'))
  return {pid: checkpoint.player_process.pid, ipc}
}

function control(dir: string, ...args: string[]) {
  // --json first: the control command's optional VALUE slot must not swallow it.
  return actors(root, ['control', '--json', dir, ...args])
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

describe('music serve with mpv', () => {
  it('applies every control to the running mpv, refuses a foreign instance id, and stops without an orphan', async () => {
    const dir = join(root, 'state-controls')
    const served = serve([music, '--state-dir', dir, '--volume', '50'])
    const {pid, ipc} = await ready(dir)

    // Directory walk in natural order, loaded as mpv's own playlist.
    expect(await ipc.get('playlist-count')).toBe(3)
    expect(await ipc.get('playlist/2/filename')).toBe(tracks[2])
    expect(await ipc.get('playlist-pos')).toBe(0)
    expect(await ipc.get('volume')).toBe(50)

    let r = control(dir, 'status')
    expect(r.code).toBe(0)
    expect(r.json).toMatchObject({
      standalone: true,
      status: {state: 'playing', index: 0, count: 3, track: tracks[0], player: 'mpv', volume: 50},
    })
    expect(r.json.status.duration_seconds).toBeCloseTo(10, 1)
    // SPEC: status prints {state, index, count, track, ...}: the same fields at the top level.
    expect(r.json).toMatchObject({state: 'playing', index: 0, count: 3, track: tracks[0], volume: 50})

    r = control(dir, 'pause')
    expect(r.code).toBe(0)
    expect(await ipc.get('pause')).toBe(true)
    const frozen = (await ipc.get('time-pos')) as number
    await sleep(400)
    expect(await ipc.get('time-pos')).toBe(frozen)
    r = control(dir, 'status')
    expect(r.json.status.state).toBe('paused')
    expect(Math.abs(r.json.status.position_seconds - frozen)).toBeLessThan(0.1)

    expect(control(dir, 'play').code).toBe(0)
    expect(await ipc.get('pause')).toBe(false)
    expect(control(dir, 'toggle').code).toBe(0)
    expect(await ipc.get('pause')).toBe(true)
    // resume is play's alias (SPEC: Music).
    r = control(dir, 'resume')
    expect(r.code, r.stderr).toBe(0)
    expect(r.json.status.state).toBe('playing')
    expect(await ipc.get('pause')).toBe(false)

    // Volume changes the running track: same mpv, position keeps going.
    const before = (await ipc.get('time-pos')) as number
    r = control(dir, 'volume', '30')
    expect(r.code).toBe(0)
    expect(r.json.status.volume).toBe(30)
    expect(await ipc.get('volume')).toBe(30)
    expect((await ipc.get('time-pos')) as number).toBeGreaterThanOrEqual(before)
    expect(processAlive(pid)).toBe(true)
    expect(control(dir, 'volume', '+5').json.status.volume).toBe(35)
    expect(await ipc.get('volume')).toBe(35)

    expect(await ipc.get('playlist-pos')).toBe(0)
    r = control(dir, 'seek', '25')
    expect(r.code).toBe(0)
    expect(Math.abs(((await ipc.get('time-pos')) as number) - 2.5)).toBeLessThan(0.5)
    expect(r.json.status.progress_percent).toBeGreaterThanOrEqual(24)
    // Paused from here on: under load the track could otherwise reach its end
    // before `next` arrives, and mpv would advance on its own.
    expect(control(dir, 'pause').code).toBe(0)

    expect(control(dir, 'next').code).toBe(0)
    expect(await ipc.get('playlist-pos')).toBe(1)
    expect(control(dir, 'status').json.status).toMatchObject({index: 1, track: tracks[1]})
    expect(control(dir, 'previous').code).toBe(0)
    expect(await ipc.get('playlist-pos')).toBe(0)

    // Bad values are usage errors before anything is sent.
    expect(control(dir, 'volume', 'loud').code).toBe(2)
    expect(control(dir, 'seek', '150').code).toBe(2)

    // A request for another service instance is refused: directly, and through the CLI (exit 3).
    const endpoint = readJson(join(dir, 'playback-endpoint.json'))
    expect(endpoint).toMatchObject({owner_mode: 'standalone', service_pid: served.child.pid})
    const foreign = await sendPlaybackRequest(endpoint, {service_instance_id: 'not-this-one', action: 'pause'})
    expect(foreign).toMatchObject({ok: false, code: 'foreign-instance'})
    writeFileSync(
      join(dir, 'playback-endpoint.json'),
      JSON.stringify({...endpoint, service_instance_id: 'stale-instance'}),
    )
    r = control(dir, 'play')
    expect(r.code).toBe(3)
    expect(r.stderr).toContain('stale-instance')
    expect(await ipc.get('pause')).toBe(true)
    writeFileSync(join(dir, 'playback-endpoint.json'), JSON.stringify(endpoint))

    r = control(dir, 'stop')
    expect(r.code).toBe(0)
    expect(r.json.status.state).toBe('stopped')
    expect(await served.exit).toBe(0)
    expect(processAlive(pid)).toBe(false)
    ipc.close()

    // No service: status answers from the checkpoint, exit 0; other actions are exit 3.
    r = control(dir, 'status')
    expect(r.code).toBe(0)
    expect(r.json.status).toMatchObject({state: 'stopped', service: 'not running', index: 0, volume: 35})
    expect(control(dir, 'pause').code).toBe(3)
  })

  it('resumes at the same track after a restart, from an m3u with relative entries', async () => {
    const dir = join(root, 'state-resume')
    const list = join(music, 'list.m3u')
    writeFileSync(list, '#EXTM3U\n# comment\n2 mid.wav\n10 high.wav\nmissing.wav\n1 low.wav\n')
    const first = serve([list, '--state-dir', dir])
    const a = await ready(dir)
    expect(first.stderr()).toContain('missing.wav')
    expect(await a.ipc.get('path')).toBe(tracks[1])
    expect(control(dir, 'next').code).toBe(0)
    expect(await a.ipc.get('playlist-pos')).toBe(1)
    expect(control(dir, 'seek', '50').code).toBe(0)
    expect(control(dir, 'stop').code).toBe(0)
    expect(await first.exit).toBe(0)
    expect(processAlive(a.pid)).toBe(false)
    const checkpoint = readJson(join(dir, 'playback.json'))
    expect(checkpoint).toMatchObject({index: 1, track: tracks[2], state: 'stopped'})
    expect(checkpoint.position_seconds).toBeGreaterThan(4.5)

    const second = serve([list, '--state-dir', dir])
    const b = await ready(dir)
    expect(await b.ipc.get('playlist-pos')).toBe(1)
    expect(await b.ipc.get('path')).toBe(tracks[2])
    expect((await b.ipc.get('time-pos')) as number).toBeGreaterThanOrEqual(checkpoint.position_seconds - 0.2)
    expect(second.stderr()).toContain('resuming at track 2/3')
    second.child.kill('SIGTERM')
    expect(await second.exit).toBe(0)
    expect(processAlive(b.pid)).toBe(false)
    b.ipc.close()
  })

  it('reports a corrupt checkpoint and rebuilds the queue', async () => {
    const dir = join(root, 'state-corrupt')
    mkdirSync(dir)
    writeFileSync(join(dir, 'playback.json'), '{"schema": "actors-playback-v1", "queue": [')
    // With no service the damaged file fails closed, naming it (exit 1, no stack trace).
    writeFileSync(
      join(dir, 'playback-endpoint.json'),
      JSON.stringify({
        owner_mode: 'standalone',
        path: join(dir, 'gone.sock'),
        service_instance_id: 'x',
        service_pid: 999999999,
      }),
    )
    let r = control(dir, 'status')
    expect(r.code).toBe(1)
    expect(r.stderr).toContain(join(dir, 'playback.json'))

    const served = serve([tracks[0], tracks[1], '--state-dir', dir])
    const {pid, ipc} = await ready(dir, served)
    expect(served.stderr()).toMatch(/playback\.json: is not valid JSON; ignoring it and rebuilding the queue/)
    expect(await ipc.get('playlist-pos')).toBe(0)
    expect(readJson(join(dir, 'playback.json')).queue).toEqual([tracks[0], tracks[1]])
    r = control(dir, 'status')
    expect(r.json.status).toMatchObject({state: 'playing', count: 2})
    served.child.kill('SIGINT')
    expect(await served.exit).toBe(0)
    expect(processAlive(pid)).toBe(false)
    ipc.close()
  })

  it('mpv quits by itself when the service is SIGKILLed (its control channel closes)', async () => {
    const dir = join(root, 'state-sigkill')
    const served = serve([tracks[0], '--state-dir', dir])
    const {pid, ipc} = await ready(dir, served)
    served.child.kill('SIGKILL')
    await served.exit
    await waitFor(() => !processAlive(pid), 5000, 'mpv to quit after its service was SIGKILLed')
    ipc.close()
    // The checkpoint still answers status, and says nothing is playing.
    const r = control(dir, 'status')
    expect(r.code).toBe(0)
    expect(r.json.status).toMatchObject({
      state: 'stopped',
      reason: 'service-gone',
      service: 'not running',
      track: tracks[0],
    })
  })

  it('the next service ends an mpv its SIGKILLed predecessor left behind (a stopped mpv cannot quit by itself)', async () => {
    const dir = join(root, 'state-orphan')
    const first = serve([tracks[0], '--state-dir', dir])
    const {pid, ipc} = await ready(dir, first)
    ipc.close()
    process.kill(pid, 'SIGSTOP')
    first.child.kill('SIGKILL')
    await first.exit
    await sleep(300)
    expect(processAlive(pid)).toBe(true)
    const second = serve([tracks[0], '--state-dir', dir])
    // Until the new mpv is up, playback.json still names the orphan: wait for the service's word instead.
    const said = `ended player pid ${pid} left behind by an earlier service`
    await waitFor(() => second.stderr().includes(said), 15_000, 'the new service to end the orphan')
    await waitFor(() => !processAlive(pid), 5000, 'the orphan mpv to be ended')
    const newer = () => readJson(join(dir, 'playback.json')).player_process?.pid
    expect(await waitFor(() => newer() && newer() !== pid, 15_000, 'a new mpv')).toBe(true)
    expect(control(dir, 'stop').code).toBe(0)
    expect(await second.exit).toBe(0)
  })

  it('leaves alone a process playback.json names that is not its player: a sleep, or an mpv of no dir', async () => {
    const dir = join(root, 'state-forged')
    const first = serve([tracks[0], '--state-dir', dir])
    const a = await ready(dir, first)
    a.ipc.close()
    expect(control(dir, 'stop').code).toBe(0)
    expect(await first.exit).toBe(0)
    // Group leaders a neighbour could name: their identity (pid, start, boot id) is public in /proc.
    const victims = [
      spawn('sleep', ['300'], {detached: true, stdio: 'ignore'}),
      spawn('mpv', ['--idle=yes', '--no-config', '--ao=null', '--vo=null', '--really-quiet'], {
        detached: true,
        stdio: 'ignore',
      }),
    ]
    children.push(...victims)
    for (const victim of victims) {
      const vpid = victim.pid!
      await waitFor(() => readProcessIdentity(vpid), 3000, 'the victim to start')
      const checkpoint = readJson(join(dir, 'playback.json'))
      const identity = readProcessIdentity(vpid)!
      checkpoint.player_process = identity
      checkpoint.service_identity = {pid: 1, start: '1', boot: identity.boot}
      writeFileSync(join(dir, 'playback.json'), JSON.stringify(checkpoint))
      const served = serve([tracks[0], '--state-dir', dir])
      const b = await ready(dir, served)
      b.ipc.close()
      expect(processAlive(vpid), `victim ${vpid} (${victim.spawnargs[0]}) was killed`).toBe(true)
      expect(served.stderr()).toContain(`playback.json names pid ${vpid}, which is not this dir's player: left alone`)
      expect(served.stderr()).not.toContain('left behind')
      expect(control(dir, 'stop').code).toBe(0)
      expect(await served.exit).toBe(0)
      expect(processAlive(vpid)).toBe(true)
    }
  })

  it("refuses a second service on the same state dir (exit 5), touching none of the live one's files", async () => {
    const dir = join(root, 'state-single')
    const first = serve([tracks[0], '--state-dir', dir])
    const {pid, ipc} = await ready(dir)
    // Paused, the live service rewrites nothing by itself, so any change below is the refused one's.
    expect(control(dir, 'pause').code).toBe(0)
    const files = ['playback.json', 'playback-endpoint.json', 'mpv-queue.m3u']
    const before = files.map((name) => readFileSync(join(dir, name), 'utf8'))
    const r = actors(root, ['music', 'serve', tracks[1], '--state-dir', dir, '--output', 'null'])
    expect(r.code).toBe(5)
    expect(r.stderr).toContain('already runs')
    expect(files.map((name) => readFileSync(join(dir, name), 'utf8'))).toEqual(before)
    expect(readJson(join(dir, 'playback.json'))).toMatchObject({
      state: 'paused',
      service_instance_id: readJson(join(dir, 'playback-endpoint.json')).service_instance_id,
    })
    expect(await ipc.get('path')).toBe(tracks[0])
    expect(control(dir, 'stop').code).toBe(0)
    expect(await first.exit).toBe(0)
    expect(processAlive(pid)).toBe(false)
    ipc.close()
  })
})

describe('music play in the foreground', () => {
  it('prints one line per track change without a TTY and ends with the queue', async () => {
    const short = join(root, 'short')
    mkdirSync(short)
    for (const name of ['a.wav', 'b.wav']) writeTone(join(short, name), 0.8, 440, {rate: 22050, channels: 1})
    const r = actors(root, [
      'music',
      'play',
      `${join(short, 'a.wav')}|${join(short, 'b.wav')}`,
      '--no-loop',
      '--output',
      'null',
    ])
    expect(r.code).toBe(0)
    expect(r.stdout).toBe(`1/2 ${join(short, 'a.wav')}\n2/2 ${join(short, 'b.wav')}\n`)
    expect(r.stderr).toContain('playback ended')
  })

  it('stops the player on SIGTERM and SIGINT: no orphan mpv', async () => {
    for (const signal of ['SIGTERM', 'SIGINT'] as const) {
      const dir = join(root, `play-${signal}`)
      const child = spawn(process.execPath, [BIN, 'music', 'play', music, '--state-dir', dir], {
        env: cliEnv(root, {ACTORS_MUSIC_OUTPUT: 'null'}),
        stdio: ['ignore', 'pipe', 'pipe'],
      })
      children.push(child)
      let out = ''
      child.stdout!.on('data', (d) => (out += d))
      const exit = new Promise<number | null>((r) => child.on('exit', (code) => r(code)))
      const {pid, ipc} = await ready(dir)
      // The line is written just after the checkpoint ready() reads; give it time to arrive through the pipe.
      await waitFor(() => out.includes('\n'), 5000, 'the first track line')
      expect(out).toBe(`1/3 ${tracks[0]}\n`)
      child.kill(signal)
      expect(await exit).toBe(0)
      expect(processAlive(pid)).toBe(false)
      expect(readJson(join(dir, 'playback.json'))).toMatchObject({state: 'stopped', reason: `signal ${signal}`})
      ipc.close()
    }
  })
})
