/**
 * `logs --json` of a huge log in bounded memory: a 2 GB sparse stdout.log
 * (its last 64 MiB, all NUL bytes, escaped as `\u0000`, are 384 MiB of JSON)
 * took 1.3 GB of memory when the document was built whole. The document is
 * the same; the peak RSS of the process is measured by /usr/bin/time.
 */
import {spawnSync} from 'node:child_process'
import {closeSync, openSync, readSync, statSync, truncateSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {actors, BIN, cliEnv, homesPerTest, waitForResult} from './helpers.js'

const home = homesPerTest('actors-logs-json-memory-')
const MIB = 1024 * 1024

/** The first and last `n` bytes of `file`, as text. */
function ends(file: string, n: number): [string, string] {
  const fd = openSync(file, 'r')
  try {
    const size = statSync(file).size
    const head = Buffer.alloc(n)
    const tail = Buffer.alloc(n)
    readSync(fd, head, 0, n, 0)
    readSync(fd, tail, 0, n, size - n)
    return [head.toString(), tail.toString()]
  } finally {
    closeSync(fd)
  }
}

describe('logs --json of a 2 GB sparse log', () => {
  it('prints the same document (its last 64 MiB) with a peak RSS under 250 MB', async () => {
    const h = home()
    const r = actors(h, ['run', '--json', '--name', 'big', '--', 'sh', '-c', 'printf "first\\n"'])
    expect(r.code, r.stderr).toBe(0)
    await waitForResult(r.json.state_dir)
    const log = join(r.json.state_dir, 'stdout.log')
    // A readable end after the hole, so the document's last characters can be checked.
    truncateSync(log, 2048 * MIB - 7)
    writeFileSync(log, 'last\n\u00e9', {flag: 'a'})
    const out = join(h, 'out.json')
    const run = spawnSync(
      'sh',
      ['-c', `/usr/bin/time -f '%M' "$0" "$1" logs big --json > "$2" 2> "$2.err"`, process.execPath, BIN, out],
      {env: cliEnv(h), encoding: 'utf8', timeout: 120_000},
    )
    expect(run.status).toBe(0)
    const lines = spawnSync('cat', [`${out}.err`], {encoding: 'utf8'})
      .stdout.trim()
      .split('\n')
    const peakKb = Number(lines.at(-1))
    expect(lines[0]).toContain('--json shows its end from byte 2080374784')
    expect(peakKb).toBeGreaterThan(0)
    expect(peakKb, `peak RSS ${peakKb} KiB`).toBeLessThan(250 * 1024)
    // {run, stream, text}: 64 MiB - 6 NULs as \u0000, then "last\n" and é, exactly as jsonDocument prints it.
    const prefix = '{\n  "run": "big",\n  "stream": "stdout",\n  "text": "'
    const [head, tail] = ends(out, 80)
    expect(head.startsWith(`${prefix}\\u0000\\u0000`), head).toBe(true)
    expect(tail).toMatch(/\\u0000last\\n\u00e9"\n}\n$/)
    expect(statSync(out).size).toBe(prefix.length + (64 * MIB - 7) * 6 + 'last\\n'.length + 2 + '"\n}\n'.length)
  })
})
