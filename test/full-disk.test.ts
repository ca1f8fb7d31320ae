/**
 * A full disk never loses an end (issue 35, Deliver 4): the state root on a
 * real 2 MiB tmpfs mounted in the test's temp dir (root only: skipped with the
 * reason otherwise). A Run whose output fills the disk still records its own
 * exit status, and a supervisor that cannot record the Run's start ends it
 * `failed` (`no_space`) instead of dying and leaving it `running`.
 */
import {spawnSync} from 'node:child_process'
import {closeSync, existsSync, mkdirSync, openSync, readFileSync, readdirSync, rmSync, writeSync} from 'node:fs'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {actors, removeDir, tempDir, waitFor, waitForResult, CONTAINMENT_MODES} from './helpers.js'

const ROOT_USER = process.getuid?.() === 0
if (!ROOT_USER) console.warn('test/full-disk: skipped: mounting a small tmpfs needs root (CI runs as root)')

let mount = ''
let base = ''
let count = 0
beforeAll(() => {
  if (!ROOT_USER) return
  base = tempDir('actors-full-disk-')
  mount = join(base, 'disk')
  mkdirSync(mount)
  const r = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=2m', 'tmpfs', mount], {encoding: 'utf8'})
  if (r.status !== 0) throw new Error(`mount -t tmpfs failed: ${r.stderr}`)
})
afterAll(() => {
  if (!mount) return
  spawnSync('umount', ['-l', mount])
  removeDir(base)
})

/** A fresh state root on the small disk (the disk is emptied first: each test fills it). */
function home(): string {
  for (const name of spawnSync('ls', ['-A', mount], {encoding: 'utf8'}).stdout.split('\n').filter(Boolean))
    rmSync(join(mount, name), {recursive: true, force: true})
  const dir = join(mount, `h${count++}`)
  mkdirSync(dir)
  return dir
}

/** Fill what is left of the disk with one file (the launch's own room stays, as it was reserved). */
function fillDisk(): void {
  const fd = openSync(join(mount, 'filler'), 'w')
  const chunk = Buffer.alloc(4096, 120)
  try {
    for (;;) writeSync(fd, chunk)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error
  } finally {
    closeSync(fd)
  }
}

describe.skipIf(!ROOT_USER).each(CONTAINMENT_MODES)('a full disk under $mode containment', ({env, skip}) => {
  it.skipIf(skip)(
    'a Run that prints until the disk is full, then exits 7: failed with exit 7, its end in the Trace',
    async () => {
      const h = home()
      const r = actors(h, ['run', '--json', '--', 'sh', '-c', 'yes filling-the-disk-filling-the-disk; exit 7'], {env})
      expect(r.code).toBe(0)
      const result = await waitForResult(r.json.state_dir, 30_000)
      expect(result).toMatchObject({status: 'failed', exit_code: 7, reason: 'exit_code'})
      const trace = readFileSync(join(r.json.state_dir, 'trace.jsonl'), 'utf8')
      expect(trace).toContain('"runtime.ended"')
      expect(actors(h, ['inspect', r.json.run, '--json']).json).toMatchObject({status: 'failed', exit_code: 7})
    },
    60_000,
  )

  it.skipIf(skip)(
    'a launch on a disk already full is refused (exit 1, with the fix); no Run is left running, no room kept',
    () => {
      const h = home()
      actors(h, ['inspect', '--json']) // the state root's own files first
      fillDisk()
      const r = actors(h, ['run', '--json', '--', 'true'], {env})
      expect(r.code).toBe(1)
      expect(r.stdout + r.stderr).toContain('no space left')
      expect(r.stdout + r.stderr).toMatch(/fix/)
      const runs = join(h, 'runs')
      for (const name of readdirSync(runs)) expect(existsSync(join(runs, name, '.end-reserve'))).toBe(false)
      rmSync(join(mount, 'filler'))
      expect(actors(h, ['inspect', '--json']).json).toMatchObject({runs: []})
    },
    60_000,
  )

  it.skipIf(skip)(
    'the disk fills between the launch and the start the supervisor records: failed (no_space), not running',
    async () => {
      const h = home()
      // A supervisor of its own: the launch returns before the start it records (the host answers only after it).
      const perRun = {...env, ACTORS_SUPERVISION: 'run', ACTORS_TEST_START_DELAY_MS: '2000'}
      const r = actors(h, ['run', '--json', '--', 'sleep', '1'], {env: perRun})
      expect(r.code).toBe(0)
      fillDisk()
      const result = await waitForResult(r.json.state_dir, 30_000)
      expect(result).toMatchObject({status: 'failed', reason: 'no_space', error: expect.stringContaining('ENOSPC')})
      await waitFor(() => actors(h, ['inspect', r.json.run, '--json']).json?.status === 'failed', 10_000, 'failed')
    },
    60_000,
  )
})

describe.skipIf(!ROOT_USER)('a disk out of inodes', () => {
  let inodes = ''
  beforeAll(() => {
    inodes = join(base, 'inodes')
    mkdirSync(inodes)
    const r = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=4m,nr_inodes=300', 'tmpfs', inodes], {encoding: 'utf8'})
    if (r.status !== 0) throw new Error(`mount -t tmpfs failed: ${r.stderr}`)
  })
  afterAll(() => {
    if (inodes) spawnSync('umount', ['-l', inodes])
  })

  it('a Run that uses up the inodes, then exits 7: failed with exit 7, recorded without its lock', async () => {
    const h = join(inodes, 'h')
    mkdirSync(h)
    const fill = 'i=0; while touch "$ACTORS_STATE_DIR/f$i" 2>/dev/null; do i=$((i+1)); done; exit 7'
    const r = actors(h, ['run', '--json', '--', 'sh', '-c', fill])
    expect(r.code, r.stderr).toBe(0)
    // result.json alone: with no inode left for a new copy of run.json, its mirror of the end is skipped.
    const file = join(r.json.state_dir, 'result.json')
    const result = await waitFor(() => existsSync(file) && JSON.parse(readFileSync(file, 'utf8')), 30_000, 'the end')
    expect(result).toMatchObject({status: 'failed', exit_code: 7, reason: 'exit_code'})
    expect(readFileSync(join(r.json.state_dir, 'stderr.log'), 'utf8')).toContain('the end is recorded without it')
    expect(actors(h, ['inspect', r.json.run, '--json']).json).toMatchObject({status: 'failed', exit_code: 7})
  }, 60_000)
})
