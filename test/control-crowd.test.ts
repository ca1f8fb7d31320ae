/**
 * Many callers at once (SPEC "Commands"; issue: one of 70 concurrent
 * `control` calls failed on a lock timeout): each waits its turn or answers
 * exit 5 busy, never exit 1. Also the ids and holders a first hour trips on:
 * `control RUN@N`, and lock holders that are init (pid 1).
 */
import {spawn, spawnSync} from 'node:child_process'
import {existsSync, readFileSync, symlinkSync} from 'node:fs'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {readProcessIdentity} from '../src/lib/base/platform/process-identity.js'
import {LOCK_SCHEMA} from '../src/lib/base/records/lock.js'
import {writeLockState} from '../src/lib/kernel/locks/store.js'
import {actors, actorsAsync, BIN, cliEnv, homesPerTest, waitFor} from './helpers.js'

const home = homesPerTest('actors-crowd-')

describe('concurrent controls', () => {
  it('70 concurrent `control RUN status` calls all answer (0, or 5 busy), none fails on a lock', async () => {
    const h = home()
    expect(actors(h, ['run', '--name', 'crowded', '--', 'sleep', '120']).code).toBe(0)
    const replies = await Promise.all(
      Array.from({length: 70}, () => actorsAsync(h, ['control', 'crowded', 'status', '--json'])),
    )
    const failed = replies.filter((r) => r.code !== 0 && r.code !== 5)
    expect(failed.map((r) => `${r.code}: ${r.stderr}`)).toEqual([])
    expect(replies.filter((r) => r.code === 0).length).toBeGreaterThan(0)
  }, 300_000)

  it('a control behind a Run lock held for 12 s waits its turn (it used to give up at 10 s with exit 1)', async () => {
    const h = home()
    expect(actors(h, ['run', '--name', 'held', '--', 'sleep', '120']).code).toBe(0)
    await waitFor(
      () => JSON.parse(readFileSync(join(h, 'runs', 'held', 'run.json'), 'utf8')).child_pid,
      15_000,
      'the command started',
    )
    // A live process "holds" the Run's lock (the lock's own format: a symlink to the holder's identity) until it exits.
    const holder = spawn('sleep', ['12'], {stdio: 'ignore'})
    try {
      await waitFor(() => readProcessIdentity(holder.pid!), 5000, 'the holder identity')
      symlinkSync(JSON.stringify(readProcessIdentity(holder.pid!)), join(h, 'runs', 'held', '.lock'))
      const started = Date.now()
      const r = await actorsAsync(h, ['control', 'held', 'pause', '--json'])
      expect(`${r.code}: ${r.stderr}`).toBe('0: ')
      expect(Date.now() - started).toBeGreaterThan(10_000)
    } finally {
      holder.kill('SIGKILL')
    }
  }, 90_000)
})

describe('ids and holders', () => {
  it('`control RUN@N` says where generations are named (exit 2)', () => {
    const r = actors(home(), ['control', 'rr@1', 'status'])
    expect(r.code).toBe(2)
    expect(r.stderr).toContain('`@N` names a generation only in inspect and logs')
  })

  it('refuses init (pid 1) as a holder at acquire, and `release --holder pid:1` clears one left from before', async () => {
    const h = home()
    const err = `${h}/acquire.err`
    // The subshell is gone by the time actors reads its parent: the caller is init.
    spawnSync('sh', ['-c', `(${process.execPath} ${BIN} lock acquire L 2>${err} &)`], {env: cliEnv(h)})
    await waitFor(() => existsSync(err) && readFileSync(err, 'utf8').includes('fix:'), 30_000, 'the refused acquire')
    expect(readFileSync(err, 'utf8')).toContain('the calling process is init (pid 1)')
    expect(actors(h, ['lock', 'status', 'L', '--json']).json.holders).toEqual([])

    const init = readProcessIdentity(1)!
    const now = new Date().toISOString()
    writeLockState(h, {
      schema: LOCK_SCHEMA,
      lock: 'L',
      slots: 1,
      holders: [{holder: {kind: 'process', ...init}, label: 'pid:1', since: now}],
      queue: [],
      updated_at: now,
    })
    expect(actors(h, ['lock', 'status', 'L', '--json']).json.holders.map((x: {holder: string}) => x.holder)).toEqual([
      'pid:1',
    ])
    const released = actors(h, ['lock', 'release', 'L', '--holder', 'pid:1', '--json'])
    expect(released.code).toBe(0)
    expect(released.json.released).toBe(true)
    expect(actors(h, ['lock', 'status', 'L', '--json']).json.holders).toEqual([])
  }, 60_000)
})
