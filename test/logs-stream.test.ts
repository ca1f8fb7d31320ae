/**
 * Whole logs and followers into closed pipes (SPEC: Authority over files and
 * Runs): `logs RUN` prints every byte at any size, unchanged; `--follow` of a
 * fast writer into a reader that went away ends promptly with flat memory.
 * Real Runs, real pipes (`| head`) through sh, sizes measured on real files.
 */
import {spawnSync} from 'node:child_process'
import {createHash} from 'node:crypto'
import {readFileSync, statSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {actors, BIN, cliEnv, homesPerTest, waitForResult} from './helpers.js'

const home = homesPerTest('actors-logs-stream-')

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex')

/** Run a shell pipeline with the CLI as `actors` (a function calling bin/actors with this Node), stdout as bytes. */
function shell(h: string, script: string, timeout = 120_000) {
  const prelude = `actors() { "${process.execPath}" "${BIN}" "$@"; }\n`
  const started = Date.now()
  const r = spawnSync('sh', ['-c', prelude + script], {env: cliEnv(h), timeout, maxBuffer: 1024 * 1024 * 1024})
  return {code: r.status, stdout: r.stdout, stderr: r.stderr.toString(), ms: Date.now() - started}
}

describe('logs RUN: the whole log, bytes unchanged', () => {
  it('prints a log over 64 MiB from its first line (seq 1 10000000: 78,888,897 bytes), streamed', async () => {
    const h = home()
    const r = actors(h, ['run', '--name', 'big', '--json', '--', 'seq', '1', '10000000'])
    expect(r.code, r.stderr).toBe(0)
    await waitForResult(r.json.state_dir, 120_000)
    const log = join(h, 'runs', 'big', 'stdout.log')
    expect(statSync(log).size).toBe(78_888_897)
    expect(shell(h, 'actors logs big | head -1').stdout.toString()).toBe('1\n')
    // The whole of it, counted and hashed on the way, never held by the test either.
    const whole = shell(h, `actors logs big | wc -c; actors logs big | sha256sum`)
    const [bytes, hash] = whole.stdout.toString().trim().split('\n')
    expect(Number(bytes)).toBe(78_888_897)
    expect(hash.split(' ')[0]).toBe(sha256(readFileSync(log)))
    // --json carries at most its last 64 MiB, and says so on stderr.
    const json = shell(h, 'actors logs big --json | wc -c')
    expect(json.stderr).toContain('--json shows its end from byte')
  }, 240_000)

  it('logs --json carries a log between 4 and 64 MiB whole (seq 1 1000000: 6,888,896 bytes), with nothing on stderr', async () => {
    const h = home()
    const r = actors(h, ['run', '--name', 'mid', '--json', '--', 'seq', '1', '1000000'])
    expect(r.code, r.stderr).toBe(0)
    await waitForResult(r.json.state_dir, 60_000)
    const log = readFileSync(join(h, 'runs', 'mid', 'stdout.log'), 'utf8')
    expect(log.length).toBe(6_888_896)
    const json = shell(h, 'actors logs mid --json')
    expect(json.code, json.stderr).toBe(0)
    expect(json.stderr).toBe('')
    const text: string = JSON.parse(json.stdout.toString()).text
    expect(text.length).toBe(log.length)
    expect(text.startsWith('1\n2\n3\n')).toBe(true)
    expect(text === log).toBe(true)
  }, 120_000)

  it('logs --follow gives what both logs gained since its last look in the order they were written (by time)', async () => {
    const h = home()
    // Written a second apart, stderr first, before anyone follows: one look finds both logs grown.
    const r = actors(h, ['run', '--name', 'two', '--json', '--', 'sh', '-c', 'echo err-1 >&2; sleep 1; echo out-1'])
    await waitForResult(r.json.state_dir)
    const followed = shell(h, 'actors logs two --follow 2>&1')
    expect(followed.code, followed.stderr).toBe(0)
    expect(
      followed.stdout
        .toString()
        .split('\n')
        .filter((l) => /^(err|out)-1$/.test(l)),
    ).toEqual(['err-1', 'out-1'])
  })

  it('passes bytes that are not UTF-8 through unchanged: whole, with --tail, and followed', async () => {
    const h = home()
    const bytes = Buffer.concat([
      Buffer.from('first\n'),
      Buffer.from([0xff, 0xfe, 0x80, 0x0a, 0xc3, 0x28, 0x0a]),
      Buffer.from('é ok\nlast'),
    ])
    const source = join(h, 'raw.bin')
    writeFileSync(source, bytes)
    const r = actors(h, ['run', '--name', 'raw', '--json', '--', 'cat', source])
    await waitForResult(r.json.state_dir)
    const whole = shell(h, 'actors logs raw')
    expect(whole.code, whole.stderr).toBe(0)
    expect(sha256(whole.stdout)).toBe(sha256(bytes))
    const tail = shell(h, 'actors logs raw --tail 3')
    expect(tail.stdout.equals(bytes.subarray(10))).toBe(true) // from the line after 0x80 0x0a
    // Followed (of a finished Run: the whole log, then the end), and as `run --follow` streams a live one.
    const followed = shell(h, 'actors logs raw --follow')
    expect(followed.code, followed.stderr).toBe(0)
    expect(sha256(followed.stdout)).toBe(sha256(bytes))
    const live = shell(h, `actors run --follow --name raw2 -- sh -c 'sleep 0.3; cat "${source}"'`)
    expect(live.code, live.stderr).toBe(0)
    expect(sha256(live.stdout)).toBe(sha256(bytes))
  })
})

/** Run `actors ARGS` under /usr/bin/time into `head -N`; returns its exit code, peak RSS, wall time and stderr. */
function followIntoHead(h: string, args: string, lines: number) {
  const out = join(h, 'follow')
  const script = `{ /usr/bin/time -o ${out}.time -f '%M %e' timeout 30 "${process.execPath}" "${BIN}" ${args} 2>${out}.err; echo $? >${out}.code; } | head -${lines} >${out}.head`
  const r = spawnSync('sh', ['-c', script], {env: cliEnv(h), timeout: 60_000})
  expect(r.status).toBe(0)
  const [rssKb, seconds] = readFileSync(`${out}.time`, 'utf8').trim().split('\n').pop()!.split(' ').map(Number)
  return {
    code: Number(readFileSync(`${out}.code`, 'utf8')),
    rssMb: rssKb / 1024,
    seconds,
    stderr: readFileSync(`${out}.err`, 'utf8'),
    head: readFileSync(`${out}.head`, 'utf8'),
  }
}

describe('followers into a closed pipe end promptly with bounded memory', () => {
  it('logs --follow and logs --follow --json of `yes` into head -1', async () => {
    const h = home()
    expect(actors(h, ['run', '--name', 'y', '--', 'yes']).code).toBe(0)
    try {
      for (const args of ['logs y --follow', 'logs y --follow --json']) {
        const followed = followIntoHead(h, args, 1)
        console.log(
          `${args} | head -1: exit ${followed.code}, peak RSS ${followed.rssMb.toFixed(1)} MiB, ${followed.seconds} s`,
        )
        expect(followed.code, followed.stderr).toBe(0)
        expect(followed.head).toMatch(/^(y|\{"type":"output")/)
        expect(followed.stderr).not.toMatch(/\n\s+at |heap|internal error/)
        expect(followed.seconds).toBeLessThan(5)
        expect(followed.rssMb).toBeLessThan(128)
      }
    } finally {
      expect(actors(h, ['control', 'y', 'kill']).code).toBe(0)
    }
  }, 120_000)

  it('run --follow -- yes into head -2', () => {
    const h = home()
    const followed = followIntoHead(h, 'run --name y --follow -- yes', 2)
    try {
      console.log(
        `run --follow -- yes | head -2: exit ${followed.code}, peak RSS ${followed.rssMb.toFixed(1)} MiB, ${followed.seconds} s`,
      )
      expect(followed.code, followed.stderr).toBe(0)
      expect(followed.head).toBe('y\ny\n')
      expect(followed.stderr).not.toMatch(/\n\s+at |heap|internal error/)
      expect(followed.seconds).toBeLessThan(5)
      expect(followed.rssMb).toBeLessThan(128)
    } finally {
      expect(actors(h, ['control', 'y', 'kill']).code).toBe(0)
    }
  }, 120_000)

  it('inbox --follow | head -1 ends once its one line was read, and its Run with it', async () => {
    const h = home()
    const script = 'actors inbox --follow | head -1; echo "piped-done"'
    const r = actors(h, ['run', '--name', 'ib', '--inbox', 'file', '--json', '--', 'sh', '-c', script])
    expect(r.code, r.stderr).toBe(0)
    const sent = Date.now()
    expect(actors(h, ['send', 'ib', 'first']).code).toBe(0)
    const result = await waitForResult(r.json.state_dir, 15_000)
    console.log(`inbox --follow | head -1: the Run ended ${Date.now() - sent} ms after the send`)
    expect(result.status).toBe('done')
    expect(readFileSync(join(r.json.state_dir, 'stdout.log'), 'utf8')).toBe('first\npiped-done\n')
    expect(readFileSync(join(r.json.state_dir, 'stderr.log'), 'utf8')).not.toMatch(/\n\s+at /)
  }, 60_000)
})
