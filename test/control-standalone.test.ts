/**
 * Standalone services through the control router's general path
 * (signals/standalone.ts): a service of any kind publishes
 * `<kind>-endpoint.json` and `controlRun` reaches it over the line-socket
 * transport, with no knowledge of the kind beyond its ServiceKind. Then the
 * real thing: `actors music serve` (real mpv, `--output null`) publishes such
 * an endpoint and `actors control DIR ...` reaches it the same way.
 */
import {spawn, type ChildProcess} from 'node:child_process'
import {existsSync, mkdirSync, readFileSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {afterAll, afterEach, beforeAll, describe, expect, it} from 'vitest'
import {controlRun} from '../src/lib/services/control/control.js'
import {socketPathIn} from '../src/lib/base/platform/line-socket.js'
import {
  serveStandaloneEndpoint,
  standaloneEndpointFile,
  type ServiceKind,
  type StandaloneServer,
} from '../src/lib/kernel/signals/standalone.js'
import {ActorsError, usageError} from '../src/lib/base/platform/errors.js'
import {MpvIpcClient} from '../src/lib/services/music/mpv-ipc.js'
import {BIN, actors, cliEnv, processAlive, readJson, removeHome, tempDir, waitFor, writeTone} from './helpers.js'

let root: string
const servers: StandaloneServer[] = []
const children: ChildProcess[] = []

beforeAll(() => {
  root = tempDir('actors-standalone-')
})
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close()
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL')
})
afterAll(() => removeHome(root))

/** A kind the router has never heard of: a counter that refuses negative steps before anything is sent. */
const counterKind: ServiceKind = {
  name: 'counter',
  holds: (dir) => existsSync(standaloneEndpointFile(dir, 'counter')),
  checkRequest: (action, value) => {
    if (action === 'add' && value !== undefined && Number(value) < 0)
      throw usageError(`add ${value}: steps are positive`)
  },
  lastKnownStatus: () => ({state: 'resting'}),
  startHint: (dir) => `start the counter in ${dir}`,
}

async function refusal(promise: Promise<unknown>): Promise<ActorsError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  )
  expect(error).toBeInstanceOf(ActorsError)
  return error as ActorsError
}

describe('a standalone service of any kind, through the general path', () => {
  it('is reached through its published endpoint; unpublished actions and bad values never reach it; a foreign instance, a second service and no service are refused', async () => {
    const home = join(root, 'home')
    const dir = join(root, 'counter')
    mkdirSync(dir, {recursive: true})
    let count = 0
    const handled: string[] = []
    const server = await serveStandaloneEndpoint(dir, {
      kind: 'counter',
      socketPath: socketPathIn(dir, 'counter.sock'),
      actions: ['add', 'status', 'stop'],
      handle: async (action, value) => {
        handled.push(action)
        if (action === 'add') count += Number(value ?? 1)
        return {ok: true, action, count}
      },
    })
    servers.push(server)
    const file = standaloneEndpointFile(dir, 'counter')
    expect(readJson(file)).toMatchObject({
      owner_mode: 'standalone',
      service_pid: process.pid,
      actions: ['add', 'status', 'stop'],
    })

    expect(await controlRun(home, dir, 'add', '2', [counterKind])).toMatchObject({
      standalone: true,
      source: 'service',
      action: 'add',
      count: 2,
    })
    // Not published by the service: exit 2 before anything is sent.
    const unpublished = await refusal(controlRun(home, dir, 'rewind', undefined, [counterKind]))
    expect(unpublished.exitCode).toBe(2)
    expect(unpublished.fix).toContain('add, status, stop')
    // The kind's own check: exit 2, nothing sent.
    expect((await refusal(controlRun(home, dir, 'add', '-1', [counterKind]))).exitCode).toBe(2)
    expect(handled).toEqual(['add'])

    // An endpoint file naming another instance: the service refuses it (exit 3) and acts on nothing.
    const published = readFileSync(file, 'utf8')
    writeFileSync(file, JSON.stringify({...JSON.parse(published), service_instance_id: 'someone-else'}))
    const foreign = await refusal(controlRun(home, dir, 'add', '5', [counterKind]))
    expect(foreign.exitCode).toBe(3)
    expect(foreign.message).toContain('someone-else')
    writeFileSync(file, published)
    expect(count).toBe(2)

    // A second service on the dir is refused (exit 5) and leaves the live one's endpoint alone.
    const second = await refusal(
      serveStandaloneEndpoint(dir, {
        kind: 'counter',
        socketPath: join(dir, 'other.sock'),
        actions: [],
        handle: async () => ({ok: true}),
      }),
    )
    expect(second.exitCode).toBe(5)
    expect(readFileSync(file, 'utf8')).toBe(published)
    expect(await controlRun(home, dir, 'status', undefined, [counterKind])).toMatchObject({source: 'service', count: 2})

    // Stopped: the endpoint stays, marked; status comes from the kind, anything else is exit 3 with its hint.
    await server.close()
    expect(readJson(file).stopped_at).toEqual(expect.any(String))
    expect(await controlRun(home, dir, 'status', undefined, [counterKind])).toMatchObject({
      standalone: true,
      source: 'checkpoint',
      state: 'resting',
    })
    const gone = await refusal(controlRun(home, dir, 'add', '1', [counterKind]))
    expect(gone.exitCode).toBe(3)
    expect(gone.fix).toBe(`start the counter in ${dir}`)
  })

  it('a service that accepts and does not answer within 5 s is exit 3', async () => {
    const home = join(root, 'home')
    const dir = join(root, 'hung')
    mkdirSync(dir, {recursive: true})
    servers.push(
      await serveStandaloneEndpoint(dir, {
        kind: 'counter',
        socketPath: socketPathIn(dir, 'counter.sock'),
        actions: ['add'],
        handle: () => new Promise(() => {}),
      }),
    )
    const started = Date.now()
    const hung = await refusal(controlRun(home, dir, 'add', '1', [counterKind]))
    expect(hung.exitCode).toBe(3)
    expect(hung.message).toContain('did not answer within 5s')
    expect(Date.now() - started).toBeGreaterThanOrEqual(4900)
  }, 20_000)
})

describe('actors music serve through the general path', () => {
  it('publishes its actions in a standalone endpoint that actors control reaches like any other', async () => {
    const dir = join(root, 'music-state')
    const track = writeTone(join(root, 'tone.wav'), 10, 440)
    const child = spawn(
      process.execPath,
      [BIN, 'music', 'serve', track, '--state-dir', dir, '--output', 'null', '--volume', '40'],
      {
        env: cliEnv(root),
        stdio: ['ignore', 'ignore', 'pipe'],
      },
    )
    children.push(child)
    let stderr = ''
    child.stderr!.on('data', (d) => (stderr += d))
    const exit = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
    await waitFor(
      () => {
        if (child.exitCode !== null) throw new Error(`music serve exited ${child.exitCode}: ${stderr}`)
        if (!existsSync(join(dir, 'playback-endpoint.json')) || !existsSync(join(dir, 'playback.json')))
          return undefined
        return readJson(join(dir, 'playback.json')).state === 'playing'
      },
      20_000,
      'music serve to be playing',
    )

    const endpoint = readJson(join(dir, 'playback-endpoint.json'))
    expect(endpoint).toMatchObject({owner_mode: 'standalone', service_pid: child.pid, path: join(dir, 'playback.sock')})
    expect(endpoint.actions).toEqual([
      'play',
      'pause',
      'toggle',
      'next',
      'previous',
      'seek',
      'volume',
      'stop',
      'status',
      'resume',
    ])
    const ipc = await MpvIpcClient.connect(join(dir, 'mpv.sock'))

    let r = actors(root, ['control', '--json', dir, 'volume', '25'])
    expect(r.code, r.stderr).toBe(0)
    expect(r.json).toMatchObject({standalone: true, source: 'service', action: 'volume', status: {volume: 25}})
    expect(await ipc.get('volume')).toBe(25)

    // Neither a playback action nor published: exit 2, and the player is untouched.
    r = actors(root, ['control', '--json', dir, 'rewind'])
    expect(r.code).toBe(2)
    expect(await ipc.get('volume')).toBe(25)
    expect(await ipc.get('pause')).toBe(false)

    r = actors(root, ['control', '--json', dir, 'stop'])
    expect(r.code, r.stderr).toBe(0)
    expect(await exit).toBe(0)
    ipc.close()
    expect(readJson(join(dir, 'playback-endpoint.json')).stopped_at).toEqual(expect.any(String))
    expect(existsSync(join(dir, 'playback.sock'))).toBe(false)
    const pid = readJson(join(dir, 'playback.json')).player_process?.pid
    if (pid) expect(processAlive(pid)).toBe(false)
  }, 60_000)
})
