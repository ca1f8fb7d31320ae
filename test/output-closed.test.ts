/**
 * SPEC, "Commands": a reader that closes stdout early (`| head`) ends the
 * command quietly, and so does a full disk, with the right exit code: no stack
 * trace, no "internal error". Real pipes closed by a real reader, and
 * /dev/full for the disk; both front ends (the fast one and oclif).
 */
import {spawn} from 'node:child_process'
import {closeSync, openSync} from 'node:fs'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {actors, BIN, cliEnv, homesPerTest, ROOT, waitForResult} from './helpers.js'

const home = homesPerTest('actors-output-')

interface Ended {
  code: number | null
  stderr: string
  /** What the reader took before it went away. */
  read: string
  ms: number
}

/**
 * Run `actors ARGS` with stdout a pipe whose reader takes `take` bytes (0:
 * none) and then closes it, like `| head -c N`.
 */
function withEarlyClosedPipe(h: string, args: string[], take: number, env: NodeJS.ProcessEnv = {}): Promise<Ended> {
  const started = Date.now()
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd: ROOT,
    env: cliEnv(h, env),
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let read = ''
  let stderr = ''
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
  const close = () => child.stdout.destroy()
  if (take === 0) close()
  else {
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      read += chunk
      if (read.length >= take) close()
    })
  }
  return new Promise((resolve) =>
    child.on('close', (code) => resolve({code, stderr, read: read.slice(0, take), ms: Date.now() - started})),
  )
}

/** Run `actors ARGS` with stdout on /dev/full (every write fails with ENOSPC). */
function toFullDisk(
  h: string,
  args: string[],
  env: NodeJS.ProcessEnv = {},
): Promise<{code: number | null; stderr: string}> {
  const full = openSync('/dev/full', 'w')
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd: ROOT,
    env: cliEnv(h, env),
    stdio: ['ignore', full, 'pipe'],
  })
  closeSync(full)
  let stderr = ''
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
  return new Promise((resolve) => child.on('close', (code) => resolve({code, stderr})))
}

const FRONT_ENDS = [
  ['fast', {}],
  ['oclif', {ACTORS_FAST: '0'}],
] as const

describe('a reader that closes the pipe early', () => {
  it.each(FRONT_ENDS)(
    'logs | head -c 10 and inspect --json with the pipe already closed end quietly, exit 0 (%s front end)',
    async (_name, env) => {
      const h = home()
      const big = actors(h, ['run', '--name', 'big', '--json', '--', 'seq', '1', '300000'])
      await waitForResult(big.json.state_dir)
      const head = await withEarlyClosedPipe(h, ['logs', 'big'], 10, env)
      expect(head.read).toBe('1\n2\n3\n4\n5\n')
      expect([head.code, head.stderr]).toEqual([0, ''])
      for (const args of [
        ['logs', 'big', '--json'],
        ['inspect', '--json'],
        ['inspect', 'big', '--json'],
        ['inspect', '--tree'],
        ['recipes', '--json'],
      ]) {
        const closed = await withEarlyClosedPipe(h, args, 0, env)
        expect([args.join(' '), closed.code, closed.stderr]).toEqual([args.join(' '), 0, ''])
      }
    },
  )

  it('logs --follow of a live Run stops when its reader goes away, not when the Run ends', async () => {
    const h = home()
    const live = actors(h, ['run', '--name', 'live', '--', 'sh', '-c', 'seq 1 100000; sleep 60'])
    expect(live.code).toBe(0)
    const followed = await withEarlyClosedPipe(h, ['logs', 'live', '--follow'], 10)
    expect([followed.code, followed.stderr]).toEqual([0, ''])
    expect(followed.ms).toBeLessThan(20_000)
    expect(actors(h, ['inspect', 'live', '--json']).json.status).toBe('running')
  })

  it('wait --json into a closed pipe ends quietly and leaves its batch to the next wait', async () => {
    const h = home()
    // Enough output in the rows that the document cannot fit in the pipe's buffer either way.
    for (let i = 0; i < 3; i++)
      await waitForResult(actors(h, ['run', '--name', `w${i}`, '--json', '--', 'seq', '1', '5000']).json.state_dir)
    const lost = await withEarlyClosedPipe(h, ['wait', '--json'], 0)
    expect([lost.code, lost.stderr]).toEqual([0, ''])
    const again = actors(h, ['wait', '--json'])
    expect(again.code).toBe(0)
    expect(again.json.rows.map((r: any) => r.run).sort()).toEqual(['w0', 'w1', 'w2'])
    expect(again.json.redelivered).toBe(true)
  })
})

describe('a full disk', () => {
  it.each(FRONT_ENDS)(
    'stdout on /dev/full: one line on stderr, exit 1, no stack trace (%s front end)',
    async (_name, env) => {
      const h = home()
      await waitForResult(actors(h, ['run', '--name', 'r', '--json', '--', 'echo', 'hi']).json.state_dir)
      for (const args of [
        ['inspect', '--json'],
        ['logs', 'r'],
        ['recipes'],
        ['run', '--', 'true'],
        ['wait', '--json'],
      ]) {
        const r = await toFullDisk(h, args, env)
        expect([args.join(' '), r.code]).toEqual([args.join(' '), 1])
        expect(r.stderr).toContain('actors: cannot write the output: no space left on the device')
        expect(r.stderr).not.toMatch(/internal error| {4}at |node:internal|Node\.js v/)
        // Said once, not once per failed write.
        expect(r.stderr.match(/cannot write the output/g)).toHaveLength(1)
      }
      // The batch that could not be written is still there for the next wait.
      const next = actors(h, ['wait', '--json']).json
      expect(next.rows.map((r: any) => r.run)).toContain('r')
      expect(next.redelivered).toBe(true)
    },
  )
})

it('keeps its own bin path (sanity: the helpers run the real CLI)', () => {
  expect(BIN).toBe(join(ROOT, 'bin', 'actors'))
})
