/**
 * stdin and stdout read and written as descriptors (src/lib/platform/fd-stdio.ts),
 * as `actors mcp` serves its session: through every kind of descriptor a
 * client may hand it (a socket pair from a Node host, a shell pipe, a
 * regular file), with the process's own stream taking over a non-blocking
 * descriptor from the first byte not yet moved, and a reader that went away
 * reported once as an error (EPIPE) rather than thrown.
 */
import {spawn, spawnSync} from 'node:child_process'
import {closeSync, constants, openSync, readFileSync, readSync, writeFileSync, writeSync} from 'node:fs'
import {Socket} from 'node:net'
import {join} from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'
import {fdSink, fdSource, type ByteSource} from '../src/lib/platform/fd-stdio.js'
import {actors, BIN, cliEnv, homesPerTest, tempDir, waitFor, writeFinishedRun} from './helpers.js'

const home = homesPerTest('actors-fd-stdio-')
let open: number[] = []

afterEach(() => {
  for (const fd of open)
    try {
      closeSync(fd)
    } catch {}
  open = []
})

/** A named pipe and its two ends, the read end opened first without waiting (O_NONBLOCK) unless `blockingRead`. */
function fifo(): {path: string; readEnd: number; writeEnd: number} {
  const path = join(tempDir('actors-fifo-'), 'pipe')
  expect(spawnSync('mkfifo', [path]).status).toBe(0)
  const readEnd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK)
  const writeEnd = openSync(path, constants.O_WRONLY)
  open.push(readEnd, writeEnd)
  return {path, readEnd, writeEnd}
}

/** Everything `source` emits until it ends. */
function collect(source: ByteSource): Promise<{text: string; events: string[]}> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    const events: string[] = []
    source.on('data', (chunk) => chunks.push(Buffer.from(chunk)))
    source.on('error', reject)
    source.on('end', () => events.push('end'))
    source.on('close', () => {
      events.push('close')
      resolve({text: Buffer.concat(chunks).toString('utf8'), events})
    })
  })
}

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

describe('fdSource', () => {
  it('hands a non-blocking descriptor to the stream, which reads every byte in order and ends', async () => {
    const {readEnd, writeEnd} = fifo()
    let handedOver = false
    const source = fdSource(readEnd, () => {
      handedOver = true
      return new Socket({fd: readEnd, readable: true, writable: false})
    })
    const got = collect(source)
    // Nothing written yet: the first read of the non-blocking pipe fails with EAGAIN.
    await waitFor(() => handedOver, 5000, 'the hand-over to the stream')
    writeSync(writeEnd, 'one\n')
    writeSync(writeEnd, 'two\n')
    closeSync(writeEnd)
    open = open.filter((fd) => fd !== writeEnd && fd !== readEnd)
    const {text, events} = await got
    expect(text).toBe('one\ntwo\n')
    expect(events).toEqual(['end', 'close'])
    expect(source.readableEnded).toBe(true)
  })

  it('reads a blocking pipe itself, holding what arrives while paused', async () => {
    const {path, writeEnd} = fifo()
    const blocking = openSync(path, constants.O_RDONLY)
    open.push(blocking)
    const source = fdSource(blocking, () => {
      throw new Error('a blocking pipe needs no stream')
    })
    const first: string[] = []
    source.on('data', (chunk) => first.push(chunk.toString()))
    writeSync(writeEnd, 'a\n')
    await waitFor(() => first.length > 0, 5000, 'the first chunk')
    source.pause()
    writeSync(writeEnd, 'b\n')
    closeSync(writeEnd)
    open = open.filter((fd) => fd !== writeEnd)
    await new Promise((r) => setTimeout(r, 100))
    expect(first.join('')).toBe('a\n')
    const ended = new Promise<void>((r) => source.on('end', () => r()))
    ;(source as unknown as {resume(): void}).resume()
    await ended
    expect(first.join('')).toBe('a\nb\n')
  })
})

/** A sink on a blocking pipe whose reader is gone: every write meets EPIPE. */
function sinkToClosedPipe() {
  const {readEnd, writeEnd} = fifo()
  closeSync(readEnd)
  open = open.filter((fd) => fd !== readEnd)
  return fdSink(writeEnd, () => {
    throw new Error('a blocking pipe needs no stream')
  })
}

describe('fdSink', () => {
  it('writes whole; on a non-blocking descriptor whose pipe is full the stream takes the rest, in order', async () => {
    const {path, readEnd} = fifo()
    const writeEnd = openSync(path, constants.O_WRONLY | constants.O_NONBLOCK)
    open.push(writeEnd)
    let handedOver = false
    const sink = fdSink(writeEnd, () => {
      handedOver = true
      return new Socket({fd: writeEnd, readable: false, writable: true})
    })
    // 1 MiB in 64 KiB lines is more than a pipe holds: a write fails with EAGAIN part-way.
    const lines = Array.from({length: 16}, (_, i) => `${String(i).padStart(2, '0')}${'x'.repeat(65_533)}\n`)
    for (const line of lines) sink.write(line)
    expect(handedOver).toBe(true)
    const chunks: Buffer[] = []
    const buffer = Buffer.alloc(65536)
    let total = 0
    const want = lines.join('').length
    await waitFor(
      () => {
        for (;;) {
          let n = 0
          try {
            n = readSync(readEnd, buffer, 0, buffer.length, null)
          } catch {
            break
          }
          if (n <= 0) break
          chunks.push(Buffer.from(buffer.subarray(0, n)))
          total += n
        }
        return total >= want
      },
      10_000,
      'every byte through the pipe',
    )
    expect(Buffer.concat(chunks).toString()).toBe(lines.join(''))
  })

  it('reports a reader gone (EPIPE) once, as an error event and to the callback, and throws nothing', async () => {
    const sink = sinkToClosedPipe()
    const errors: string[] = []
    sink.on('error', (error: NodeJS.ErrnoException) => errors.push(String(error.code)))
    const callbacks: string[] = []
    expect(sink.write('lost\n', (error) => callbacks.push(String((error as NodeJS.ErrnoException)?.code)))).toBe(false)
    expect(sink.write('lost too\n', (error) => callbacks.push(String((error as NodeJS.ErrnoException)?.code)))).toBe(
      false,
    )
    await new Promise((r) => setTimeout(r, 50))
    expect(errors).toEqual(['EPIPE'])
    expect(callbacks).toEqual(['EPIPE', 'EPIPE'])
  })

  it('with nobody listening for errors yet (before the SDK has loaded), EPIPE fails the write and throws nothing', async () => {
    const sink = sinkToClosedPipe()
    const uncaught: unknown[] = []
    const onUncaught = (error: unknown) => uncaught.push(error)
    process.on('uncaughtException', onUncaught)
    try {
      const failed = new Promise<string>((resolve) =>
        sink.write('an error line for a client gone\n', (error) =>
          resolve(String((error as NodeJS.ErrnoException)?.code)),
        ),
      )
      expect(await failed).toBe('EPIPE')
      await new Promise((r) => setTimeout(r, 50))
      expect(uncaught).toEqual([])
    } finally {
      process.off('uncaughtException', onUncaught)
    }
  })
})

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
