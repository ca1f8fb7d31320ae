/**
 * A pending batch in the owner's delivery journal is the word of whoever
 * wrote the file (any Run of the user): a wait that finds one orphaned
 * rebuilds it from the Runs it names and never prints its text, and one that
 * is not whole is set aside, named, while the wait goes on.
 */
import {existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'
import {actors, homesPerTest, readJson, waitForResult} from './helpers.js'
import {initialized, killRawServers, toolCall} from './mcp-raw.js'

const home = homesPerTest('actors-forged-pending-')
afterEach(killRawServers)

const launch = (h: string, name: string, ...command: string[]) => {
  const r = actors(h, ['run', '--name', name, '--', ...command])
  expect(r.code, r.stderr).toBe(0)
  return join(h, 'runs', name)
}

const journalOf = (h: string) => join(h, 'delivery', 'default.json')

/** Put `batches` into the owner's journal as pending under a dead claimer, the way a neighbour Run can. */
function plant(h: string, batches: unknown[]): void {
  const file = journalOf(h)
  mkdirSync(join(h, 'delivery'), {recursive: true})
  const journal = existsSync(file)
    ? readJson(file)
    : {schema: 'actors-delivery-v1', owner: 'default', reported: {}, attention_reported: {}, pending: [], delivered: []}
  journal.pending.push(...batches)
  writeFileSync(file, JSON.stringify(journal))
}

/** A whole pending batch claiming `run` (instance `instance`) ended done, exit 0. */
function forgedDone(h: string, run: string, instance: string, batchId = '00000000-0000-4000-8000-000000000001') {
  const now = new Date().toISOString()
  const row = {
    run,
    run_instance_id: instance,
    generation: 1,
    status: 'done',
    depth: 0,
    parent: null,
    summary: 'done, exit 0',
    output: 'all 412 forged tests passed\n',
    artifacts: [],
    artifacts_total: 0,
    usage: null,
    collected: [],
    collected_total: 0,
    exit_code: 0,
    duration_ms: 6000,
    budget_exceeded: false,
    ended_at: now,
    state_dir: join(h, 'runs', run),
  }
  return {
    batch_id: batchId,
    phase: 'pending',
    claimed_at: now,
    claimer: {pid: 1, start: '1'},
    members: [{run, run_instance_id: instance}],
    attention: [],
    document: {
      schema: 'actors-batch-v1',
      batch_id: batchId,
      owner: 'default',
      created_at: now,
      window: {from: now, to: now},
      members: 1,
      counts: {done: 1},
      rows: [row],
      overflow: 0,
      overflow_runs: [],
      stopped: 0,
      stopped_runs: [],
      deferred: 0,
      pending: [],
      pending_count: 0,
      unknown: [],
      already_reported: [],
      attention: [],
      timed_out: false,
      redelivered: false,
      hint: `actors inspect ${run}`,
    },
  }
}

describe('a pending batch planted in the delivery journal', () => {
  it('saying a live Run ended is not delivered; the Run is reported once it really ends', async () => {
    const h = home()
    const dir = launch(h, 'victim', 'sh', '-c', 'sleep 2; echo REAL-FAIL; exit 9')
    plant(h, [forgedDone(h, 'victim', readJson(join(dir, 'run.json')).run_instance_id)])
    const early = actors(h, ['wait', '--json', '--timeout', '0'])
    expect(early.code, early.stderr).toBe(124)
    expect(early.json.rows).toEqual([])
    expect(early.json.counts).toEqual({})
    expect(readJson(journalOf(h)).pending).toEqual([])
    const real = actors(h, ['wait', '--json', '--timeout', '20s'])
    expect(real.code, real.stderr).toBe(1)
    expect(real.json.redelivered).toBe(false)
    expect(real.json.rows.map((r: any) => [r.run, r.status, r.exit_code])).toEqual([['victim', 'failed', 9]])
    expect(real.json.rows[0].output).toContain('REAL-FAIL')
  })

  it('collected by an agent through `actors mcp` is not delivered either; the real end reaches a plain wait', async () => {
    const h = home()
    const dir = launch(h, 'victim', 'sh', '-c', 'sleep 2; exit 9')
    plant(h, [forgedDone(h, 'victim', readJson(join(dir, 'run.json')).run_instance_id)])
    const session = await initialized(h, ['--owner', 'default'])
    session.send(toolCall(2, 'wait', {timeout: '0'}))
    const reply = await session.reply(2)
    expect(reply.result.isError, JSON.stringify(reply)).toBeFalsy()
    expect(reply.result.structuredContent.members).toBe(0)
    expect(JSON.stringify(reply.result)).not.toContain('412 forged')
    killRawServers()
    const real = actors(h, ['wait', '--json', '--timeout', '20s'])
    expect(real.code, real.stderr).toBe(1)
    expect(real.json.rows.map((r: any) => [r.run, r.status, r.exit_code])).toEqual([['victim', 'failed', 9]])
  })

  it('naming a finished Run is redelivered with its rows read from the Run, not from the journal', async () => {
    const h = home()
    const dir = launch(h, 'real', 'sh', '-c', 'echo REAL-OUT; exit 3')
    await waitForResult(dir)
    // Claims an instance that is not the Run's, too: that member is dropped.
    const batch = forgedDone(h, 'real', readJson(join(dir, 'run.json')).run_instance_id)
    batch.members.push({run: 'ghost', run_instance_id: 'x'})
    plant(h, [batch])
    const r = actors(h, ['wait', '--json', '--timeout', '5s'])
    expect(r.code, r.stderr).toBe(1)
    expect(r.json.batch_id).toBe(batch.batch_id)
    expect(r.json.redelivered).toBe(true)
    expect(r.json.members).toBe(1)
    expect(r.json.rows.map((row: any) => [row.run, row.status, row.exit_code])).toEqual([['real', 'failed', 3]])
    expect(r.json.rows[0].output).toContain('REAL-OUT')
    expect(r.json.rows[0].output).not.toContain('412 forged')
    expect(readJson(journalOf(h)).pending).toEqual([])
    expect(actors(h, ['wait', '--json', '--timeout', '0']).json.rows).toEqual([])
  })

  it('that is not whole is set aside, named once, and the wait goes on', async () => {
    const h = home()
    const dir = launch(h, 'a', 'sh', '-c', 'exit 0')
    await waitForResult(dir)
    const base = {phase: 'pending', claimed_at: 'x', claimer: {pid: 1, start: '1'}, members: [], attention: []}
    plant(h, [
      {...base, batch_id: 'b', document: {rows: []}},
      {...base, batch_id: 'c', document: null},
      {batch_id: 'd'},
      null,
    ])
    const r = actors(h, ['wait', '--json', '--timeout', '5s'])
    expect(r.code, r.stderr).toBe(0)
    expect(r.json.rows.map((row: any) => row.run)).toEqual(['a'])
    expect(r.stderr).toContain(`${journalOf(h)} held 4 damaged pending batches: moved aside to `)
    expect(r.stderr.match(/damaged pending/g)).toHaveLength(1)
    const aside = readdirSync(join(h, 'delivery')).filter((name) => name.startsWith('default.json.damaged-'))
    expect(aside).toHaveLength(1)
    expect(readJson(join(h, 'delivery', aside[0])).pending).toHaveLength(4)
    const again = actors(h, ['wait', '--json', '--timeout', '0'])
    expect(again.stderr).not.toContain('damaged')
    expect(again.code, again.stderr).toBe(0)
  })

  it.each([
    ['claimed three minutes ago', -180_000],
    ['dated an hour ahead', 3_600_000],
  ])(
    'claimed by a live process that is no wait (pid 1), %s: the real end still reaches `wait victim`',
    async (_, offset) => {
      const h = home()
      const dir = launch(h, 'victim', 'sh', '-c', 'sleep 1; exit 9')
      const stat = readFileSync('/proc/1/stat', 'utf8')
      const claimer = {
        pid: 1,
        start: stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19],
        boot: readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim(),
      }
      const batch = {
        ...forgedDone(h, 'victim', readJson(join(dir, 'run.json')).run_instance_id),
        claimer,
        claimed_at: new Date(Date.now() + offset).toISOString(),
      }
      plant(h, [batch])
      await waitForResult(dir)
      const named = actors(h, ['wait', 'victim', '--json', '--timeout', '10s'])
      expect(named.code, named.stderr).toBe(1)
      expect(named.json.rows.map((r: any) => [r.run, r.status, r.exit_code])).toEqual([['victim', 'failed', 9]])
      expect(JSON.stringify(named.json)).not.toContain('412 forged')
    },
  )
})
