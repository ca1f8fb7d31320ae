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

  it('passes bytes that are not UTF-8 through unchanged, whole and with --tail', async () => {
    const h = home()
    const bytes = Buffer.concat([Buffer.from('first\n'), Buffer.from([0xff, 0xfe, 0x80, 0x0a, 0xc3, 0x28, 0x0a]), Buffer.from('é ok\nlast')])
    const source = join(h, 'raw.bin')
    writeFileSync(source, bytes)
    const r = actors(h, ['run', '--name', 'raw', '--json', '--', 'cat', source])
    await waitForResult(r.json.state_dir)
    const whole = shell(h, 'actors logs raw')
    expect(whole.code, whole.stderr).toBe(0)
    expect(sha256(whole.stdout)).toBe(sha256(bytes))
    const tail = shell(h, 'actors logs raw --tail 3')
    expect(tail.stdout.equals(bytes.subarray(10))).toBe(true) // from the line after 0x80 0x0a
  })
})
