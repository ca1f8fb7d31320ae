/**
 * stdin and stdout of every kind a client may hand `actors mcp` (a shell
 * pipe, a regular file, descriptors left non-blocking), and a reader that
 * went away reported quietly rather than thrown; and a command's result on a
 * non-blocking stdout (present/output-guard.ts writeWhole), out whole and in
 * order.
 */
import {spawn, spawnSync} from 'node:child_process'
import {closeSync, openSync, readFileSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'
import {actors, BIN, cliEnv, homesPerTest, tempDir, waitFor, writeFinishedRun} from './helpers.js'

const home = homesPerTest('actors-stdio-kinds-')
let open: number[] = []

afterEach(() => {
  for (const fd of open)
    try {
      closeSync(fd)
    } catch {}
  open = []
})

const INIT = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: {protocolVersion: '2025-11-25', capabilities: {}, clientInfo: {name: 't', version: '1'}},
})
const session = [
  INIT,
  JSON.stringify({jsonrpc: '2.0', method: 'notifications/initialized'}),
  JSON.stringify({jsonrpc: '2.0', id: 2, method: 'tools/call', params: {name: 'inspect', arguments: {}}}),
  JSON.stringify({jsonrpc: '2.0', id: 3, method: 'ping'}),
].join('\n')

describe('actors mcp over every kind of descriptor', () => {
  it('serves a session through a shell pipe and to a pipe, answering each request once', () => {
    const h = home()
    const r = spawnSync('bash', ['-c', `printf '%s\\n' "$SESSION" | "$BIN" mcp | cat`], {
      env: {...cliEnv(h), SESSION: session, BIN},
      encoding: 'utf8',
      timeout: 30_000,
    })
    expect(r.status).toBe(0)
    const replies = r.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line))
    // The ping may overtake the tool call: each is answered once.
    expect(replies.map((reply) => reply.id).sort()).toEqual([1, 2, 3])
    expect(replies.find((reply) => reply.id === 2).result.structuredContent).toMatchObject({runs: []})
  })

  it('serves a session read from a regular file and written to one, then exits 0', () => {
    const h = home()
    const dir = tempDir('actors-mcp-files-')
    writeFileSync(join(dir, 'in.jsonl'), `${session}\n`)
    const input = openSync(join(dir, 'in.jsonl'), 'r')
    const output = openSync(join(dir, 'out.jsonl'), 'w')
    open.push(input, output)
    const r = spawnSync(process.execPath, [BIN, 'mcp'], {
      env: cliEnv(h),
      stdio: [input, output, 'pipe'],
      timeout: 30_000,
    })
    expect(r.status).toBe(0)
    const replies = readFileSync(join(dir, 'out.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line))
    expect(replies.map((reply) => reply.id).sort()).toEqual([1, 2, 3])
  })

  it('serves a client that left stdin and stdout non-blocking (the streams take over), answering each request once', async () => {
    const h = home()
    // Node's own spawn makes a child's stdio blocking; perl (perl-base: on every Debian) sets O_NONBLOCK, then execs.
    const nonBlocking =
      'use Fcntl; for (*STDIN, *STDOUT) { fcntl($_, F_SETFL, fcntl($_, F_GETFL, 0) | O_NONBLOCK) or die } exec @ARGV or die'
    const child = spawn('perl', ['-e', nonBlocking, process.execPath, BIN, 'mcp'], {env: cliEnv(h)})
    let out = ''
    let stderr = ''
    child.stdout.on('data', (chunk) => (out += chunk))
    child.stderr.on('data', (chunk) => (stderr += chunk))
    // Nothing to read at first: the server's first read meets EAGAIN and hands stdin to process.stdin.
    await new Promise((r) => setTimeout(r, 500))
    child.stdin.write(`${session}\n`)
    await waitFor(() => out.split('\n').length > 3, 20_000, `three answers (stderr: ${stderr})`)
    child.stdin.end()
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve))
    const replies = out
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line))
    expect(replies.map((reply) => reply.id).sort()).toEqual([1, 2, 3])
    expect(code).toBe(0)
  })

  it('ends quietly when the client stops reading its answers (EPIPE): exit without a stack trace', () => {
    const h = home()
    // `true` reads nothing and exits: the server's first answer meets a closed pipe.
    const r = spawnSync(
      'bash',
      ['-c', `{ sleep 0.3; printf '%s\\n' "$SESSION"; sleep 1; } | "$BIN" mcp | true; echo "server=\${PIPESTATUS[1]}"`],
      {
        env: {...cliEnv(h), SESSION: session, BIN},
        encoding: 'utf8',
        timeout: 30_000,
      },
    )
    expect(r.stdout.trim()).toMatch(/^server=\d+$/)
    expect(r.stderr).not.toMatch(/\n\s+at /)
  })
})

describe('a command result on a non-blocking stdout (present/output-guard.ts writeWhole)', () => {
  it('goes out whole and in order when the pipe fills part-way: the rest is handed to process.stdout', async () => {
    const h = home()
    for (let i = 0; i < 400; i++) writeFinishedRun(h, `many-${String(i).padStart(3, '0')}`)
    const expected = actors(h, ['inspect', '--json']).stdout
    // Far more than a pipe holds: write(2) meets EAGAIN long before the reader takes anything.
    expect(expected.length).toBeGreaterThan(200_000)
    // Node's own spawn makes a child's stdio blocking; perl (perl-base: on every Debian) sets O_NONBLOCK, then execs.
    const nonBlocking =
      'use Fcntl; fcntl(STDOUT, F_SETFL, fcntl(STDOUT, F_GETFL, 0) | O_NONBLOCK) or die; exec @ARGV or die'
    const child = spawn('perl', ['-e', nonBlocking, process.execPath, BIN, 'inspect', '--json'], {env: cliEnv(h)})
    child.stdout.pause()
    let stderr = ''
    child.stderr.on('data', (chunk) => (stderr += chunk))
    await new Promise((r) => setTimeout(r, 500))
    const chunks: Buffer[] = []
    child.stdout.on('data', (chunk: Buffer) => chunks.push(chunk))
    child.stdout.resume()
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve))
    expect(stderr).toBe('')
    expect(code).toBe(0)
    expect(Buffer.concat(chunks).toString()).toBe(expected)
  }, 60_000)
})
