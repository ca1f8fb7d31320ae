/**
 * Declared actions end to end: a real Node service (dist/service.js) answering
 * on its Unix socket, a polling service claiming from the journal, the stale
 * generation refusal, concurrent controls, runtime names a service handles
 * itself (with the kernel fallback), and the journal's bounds and fencing.
 */
import {existsSync, mkdirSync, readFileSync, writeFileSync} from 'node:fs'
import {basename, join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {ROOT, actors, actorsAsync, processAlive, readJson, tempDir, waitFor, removeHome} from './helpers.js'
import {isPaused} from './frozen.js'
import {
  MAX_FINISHED,
  MAX_PENDING,
  appendControlRecord,
  claimControl,
  completeControl,
  readControlRecords,
} from '../src/lib/kernel/signals/journal.js'

let home: string
let recipes: string
const serviceUrl = `file://${join(ROOT, 'dist', 'service.js')}`

const SERVICE = `
import {appendFileSync} from 'node:fs'
import {serveControlEndpoint} from '${serviceUrl}'
let track = 0
await serveControlEndpoint({
  handle: async ({id, action, input}) => {
    appendFileSync(process.env.SERVICE_LOG, JSON.stringify({id, action, input}) + '\\n')
    if (action === 'next') return {track: ++track}
    if (action === 'volume') {
      const v = Number(input)
      if (!Number.isInteger(v) || v < 0 || v > 100) return {ok: false, error: 'volume ' + input + ' is not 0-100', exit_code: 2}
      return {volume: v}
    }
    if (action === 'status') return {track}
    if (action === 'pause') return {paused: true}
    throw new Error('unknown action ' + action)
  },
})
`

const POLLER = `
import {watch} from 'node:fs'
import {claimControl, completeControl, listQueuedControls} from '${serviceUrl}'
const dir = process.env.ACTORS_STATE_DIR
const instance = process.env.ACTORS_RUN_INSTANCE
const drain = () => {
  for (const record of listQueuedControls(dir, instance)) {
    const claimed = claimControl(dir, record.id, 'queued', instance)
    if (claimed) completeControl(dir, claimed.id, 'handled', {reply: {ok: true, echo: claimed.input}})
  }
}
watch(dir, drain)
setInterval(drain, 1000)
drain()
`

beforeAll(() => {
  home = tempDir()
  recipes = join(home, 'recipes')
  mkdirSync(recipes)
  writeFileSync(join(recipes, 'service.mjs'), SERVICE)
  writeFileSync(join(recipes, 'poller.mjs'), POLLER)
  writeFileSync(
    join(recipes, 'svc.yaml'),
    [
      "template: [node, '{recipe_dir}/service.mjs']",
      'control: [next, volume]',
      'env: {SERVICE_LOG: "{state_dir}/service.log"}',
      '',
    ].join('\n'),
  )
  writeFileSync(
    join(recipes, 'poll.yaml'),
    ["template: [node, '{recipe_dir}/poller.mjs']", 'control: [job]', ''].join('\n'),
  )
  writeFileSync(join(recipes, 'mute.yaml'), ['template: [sleep, "300"]', 'control: [job]', ''].join('\n'))
})
afterAll(() => removeHome(home))

function launch(recipe: string, name: string): {run: string; state_dir: string} {
  const r = actors(home, ['run', recipe, '--name', name, '--recipes', recipes, '--json'])
  expect(r.code, r.stderr).toBe(0)
  return r.json
}

const serviceLog = (dir: string) =>
  existsSync(join(dir, 'service.log'))
    ? readFileSync(join(dir, 'service.log'), 'utf8')
        .trim()
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l))
    : []

describe('a service on its socket', () => {
  let svc: {run: string; state_dir: string}
  beforeAll(async () => {
    svc = launch('svc', 'svc')
    await waitFor(() => existsSync(join(svc.state_dir, 'control-endpoint.json')), 15_000, 'control-endpoint.json')
  })

  it('answers declared actions; the reply is printed and the record handled', () => {
    const endpoint = readJson(join(svc.state_dir, 'control-endpoint.json'))
    expect(endpoint).toMatchObject({
      type: 'unix',
      run_instance_id: readJson(join(svc.state_dir, 'run.json')).run_instance_id,
    })
    const r = actors(home, ['control', svc.run, 'next', '--json'])
    expect(r.code, r.stderr).toBe(0)
    expect(r.json).toMatchObject({
      handled_by: 'service',
      reply: {ok: true, track: 1},
      record: {action: 'next', status: 'handled'},
    })
    expect(serviceLog(svc.state_dir).map((e) => e.id)).toContain(r.json.record.id)

    const plain = actors(home, ['control', svc.run, 'volume', '40'])
    expect(plain.code).toBe(0)
    expect(JSON.parse(plain.stdout)).toEqual({volume: 40, ok: true})

    const bad = actors(home, ['control', svc.run, 'volume', 'loud', '--json'])
    expect(bad.code).toBe(2)
    expect(bad.stderr).toContain('volume loud is not 0-100')
    expect(bad.json.error.record.status).toBe('failed')

    const status = actors(home, ['control', svc.run, 'status', '--json'])
    expect(status.code).toBe(0)
    expect(status.json).toMatchObject({
      status: 'running',
      declared: ['next', 'volume'],
      endpoint: {current: true},
      service: {ok: true, track: 1},
    })
    expect(status.json.pids.length).toBeGreaterThan(0)
  })

  it('concurrent controls: every one answered once, journal valid with unique ids', async () => {
    const before = readControlRecords(svc.state_dir).length
    const results = await Promise.all(
      Array.from({length: 8}, () => actorsAsync(home, ['control', svc.run, 'next', '--json'])),
    )
    for (const r of results) expect(r.code, r.stderr).toBe(0)
    const tracks = results.map((r) => r.json.reply.track)
    expect(new Set(tracks).size).toBe(8)
    const lines = readFileSync(join(svc.state_dir, 'controls.jsonl'), 'utf8').trim().split('\n')
    const records = lines.map((l) => JSON.parse(l))
    expect(records.length).toBe(before + 8)
    expect(new Set(records.map((r) => r.id)).size).toBe(records.length)
    const ids = results.map((r) => r.json.record.id)
    for (const id of ids) expect(records.find((r) => r.id === id)?.status).toBe('handled')
    expect(serviceLog(svc.state_dir).filter((e) => ids.includes(e.id)).length).toBe(8)
  })

  it('refuses an endpoint of another generation: exit 3, nothing sent, nothing journaled', () => {
    const file = join(svc.state_dir, 'control-endpoint.json')
    const original = readFileSync(file, 'utf8')
    writeFileSync(
      file,
      JSON.stringify({...JSON.parse(original), run_instance_id: '00000000-0000-4000-8000-000000000000'}),
    )
    const journal = readControlRecords(svc.state_dir).length
    const served = serviceLog(svc.state_dir).length
    const r = actors(home, ['control', svc.run, 'next', '--json'])
    expect(r.code).toBe(3)
    expect(r.stderr).toContain('nothing was sent')
    expect(readControlRecords(svc.state_dir).length).toBe(journal)
    expect(serviceLog(svc.state_dir).length).toBe(served)
    writeFileSync(file, original)
  })

  it('a declared runtime name goes to the service, not to SIGSTOP; stop cleans the endpoint up', async () => {
    // The Recipe loader does not accept runtime names in `control` yet; declare it in run.json directly.
    const metaFile = join(svc.state_dir, 'run.json')
    writeFileSync(metaFile, JSON.stringify({...readJson(metaFile), control: ['next', 'volume', 'pause']}))
    const r = actors(home, ['control', svc.run, 'pause', '--json'])
    expect(r.code, r.stderr).toBe(0)
    expect(r.json).toMatchObject({handled_by: 'service', reply: {ok: true, paused: true}})
    const pid = readJson(metaFile).child_pid
    expect(isPaused(pid)).toBe(false)

    const stop = actors(home, ['control', svc.run, 'stop', '--json'])
    expect(stop.code, stop.stderr).toBe(0)
    expect(stop.json.status).toBe('cancelled')
    expect(processAlive(pid)).toBe(false)
    expect(existsSync(join(svc.state_dir, 'control-endpoint.json'))).toBe(false)
    expect(existsSync(join(svc.state_dir, 'control.sock'))).toBe(false)
  })
})

describe('without a socket', () => {
  it('a polling service claims and handles the record', async () => {
    const poll = launch('poll', 'poll')
    await waitFor(
      () => actors(home, ['control', poll.run, 'status', '--json']).json?.pids.length > 0,
      10_000,
      'poller running',
    )
    const r = actors(home, ['control', poll.run, 'job', 'hello', '--json'])
    expect(r.code, r.stderr).toBe(0)
    expect(r.json).toMatchObject({
      handled_by: 'service',
      reply: {ok: true, echo: 'hello'},
      record: {status: 'handled', input: 'hello'},
    })
    expect(r.json.record.claimed_at).toBeTruthy()
    expect(actors(home, ['control', poll.run, 'kill']).code).toBe(0)
  })

  it('nobody claims: exit 3 with the record still queued; a full journal is backpressure (exit 5)', async () => {
    const mute = launch('mute', 'mute')
    const r = actors(home, ['control', mute.run, 'job', 'one', '--json'])
    expect(r.code).toBe(3)
    expect(r.json.error.record).toMatchObject({status: 'queued', action: 'job', input: 'one'})
    const instance = readJson(join(mute.state_dir, 'run.json')).run_instance_id
    for (let i = 1; i < MAX_PENDING; i++) appendControlRecord(mute.state_dir, {action: 'job', runInstanceId: instance})
    const full = actors(home, ['control', mute.run, 'job', '--json'])
    expect(full.code).toBe(5)
    expect(full.stderr).toContain(`limit ${MAX_PENDING}`)
    expect(readControlRecords(mute.state_dir).length).toBe(MAX_PENDING)

    // Still a fallback target: a runtime name declared but no endpoint → the kernel pauses.
    const metaFile = join(mute.state_dir, 'run.json')
    writeFileSync(metaFile, JSON.stringify({...readJson(metaFile), control: ['job', 'pause']}))
    const paused = actors(home, ['control', mute.run, 'pause', '--json'])
    expect(paused.code, paused.stderr).toBe(0)
    expect(paused.json).toMatchObject({handled_by: 'kernel', status: 'paused'})
    expect(paused.json.fallback).toContain('no control endpoint')
    expect(isPaused(readJson(metaFile).child_pid)).toBe(true)
    expect(actors(home, ['control', mute.run, 'kill']).code).toBe(0)
  })
})

describe('journal (kernel)', () => {
  function fakeRun(): {dir: string; instance: string} {
    const dir = join(home, 'runs', `j-${Math.random().toString(16).slice(2)}`)
    mkdirSync(dir, {recursive: true})
    const instance = '11111111-1111-4111-8111-111111111111'
    writeFileSync(
      join(dir, 'run.json'),
      JSON.stringify({
        schema: 'actors-run-v1',
        run: basename(dir),
        run_instance_id: instance,
        status: 'running',
        control: ['job'],
      }),
    )
    return {dir, instance}
  }

  it('claims are fenced by expected status and generation; the first completion wins', () => {
    const {dir, instance} = fakeRun()
    const record = appendControlRecord(dir, {action: 'job', input: 'x', runInstanceId: instance})
    expect(claimControl(dir, record.id, 'queued', 'another-generation')).toBeUndefined()
    expect(claimControl(dir, record.id, 'queued', instance)?.status).toBe('claimed')
    expect(claimControl(dir, record.id, 'queued')).toBeUndefined()
    expect(completeControl(dir, record.id, 'handled', {reply: {ok: true}})?.status).toBe('handled')
    expect(completeControl(dir, record.id, 'failed', {error: 'late'})).toBeUndefined()
    expect(() => appendControlRecord(dir, {action: 'job', runInstanceId: 'stale'})).toThrow(/generation/)
    const big = completeControl(dir, appendControlRecord(dir, {action: 'job', runInstanceId: instance}).id, 'handled', {
      reply: {ok: true, blob: 'x'.repeat(5000)},
    })
    expect(big).toMatchObject({status: 'failed', error: expect.stringContaining('4096-byte limit')})
  })

  it('compacts to every pending record and the last finished ones', () => {
    const {dir, instance} = fakeRun()
    const pending = appendControlRecord(dir, {action: 'job', input: 'keep', runInstanceId: instance})
    let last = ''
    for (let i = 0; i < MAX_FINISHED + 40; i++) {
      last = appendControlRecord(dir, {action: 'job', runInstanceId: instance}).id
      completeControl(dir, last, 'handled', {reply: {ok: true, i}})
    }
    const records = readControlRecords(dir)
    expect(records.length).toBe(MAX_FINISHED + 1)
    expect(records[0].id).toBe(pending.id)
    expect(records.at(-1)?.id).toBe(last)
  })
})
