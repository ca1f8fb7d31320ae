/**
 * The line-socket transport every Unix-socket endpoint speaks
 * (src/lib/base/platform/line-socket.ts), on real sockets in a temp dir: one line
 * each way, replies bounded at 4 KiB on both sides, bounded requests, a stale
 * socket file left by a killed server, peers that close mid-line, timeouts,
 * and a close that does not wait on idle clients.
 */
import {spawn, spawnSync} from 'node:child_process'
import {existsSync, lstatSync, readFileSync, writeFileSync} from 'node:fs'
import {connect, createServer, type Server} from 'node:net'
import {join} from 'node:path'
import {tmpdir} from 'node:os'
import {createHash} from 'node:crypto'
import {afterEach, describe, expect, it} from 'vitest'
import {requestJsonReply} from '../src/lib/kernel/signals/endpoint.js'
import {
  LineSocketError,
  MAX_REPLY_BYTES,
  requestLine,
  serveLines,
  type LineServer,
  isTempSocketOf,
  socketPathIn,
} from '../src/lib/base/platform/line-socket.js'
import {homesPerTest, waitFor} from './helpers.js'

const dirOf = homesPerTest('actors-line-socket-')
const open: Array<LineServer | Server> = []
afterEach(async () => {
  for (const server of open.splice(0)) {
    if ('path' in server) await server.close()
    else server.close()
  }
})

/** A raw server that answers every connection with `onConnection` (for peers that misbehave). */
async function rawServer(path: string, onConnection: Parameters<typeof createServer>[1]): Promise<Server> {
  const server = createServer(onConnection!)
  open.push(server)
  await new Promise<void>((resolve) => server.listen(path, resolve))
  return server
}

async function rejection(promise: Promise<unknown>): Promise<LineSocketError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  )
  expect(error).toBeInstanceOf(LineSocketError)
  return error as LineSocketError
}

describe('line-socket transport', () => {
  it('one line each way; handlers see the line without its newline', async () => {
    const path = join(dirOf(), 's.sock')
    const seen: string[] = []
    open.push(
      await serveLines(path, async (line) => {
        seen.push(line)
        return `echo ${line}`
      }),
    )
    expect(lstatSync(path).isSocket()).toBe(true)
    expect(await requestLine(path, 'hello', {timeoutMs: 5000})).toBe('echo hello')
    expect(await requestLine(path, 'again', {timeoutMs: 5000})).toBe('echo again')
    expect(seen).toEqual(['hello', 'again'])
  })

  it('a reply of exactly 4 KiB is taken; one byte more is refused by the client, not read on', async () => {
    const dir = dirOf()
    const fits = join(dir, 'fits.sock')
    await rawServer(fits, (socket) => socket.once('data', () => socket.end('x'.repeat(MAX_REPLY_BYTES) + '\n')))
    expect(await requestLine(fits, 'q', {timeoutMs: 5000})).toHaveLength(4096)

    const over = join(dir, 'over.sock')
    // Over the bound and never terminated: the client stops at the bound instead of buffering on.
    let written = 0
    await rawServer(over, (socket) => {
      socket.on('error', () => {})
      socket.once('data', () => {
        const chunk = 'y'.repeat(1024)
        const pump = () => {
          while (!socket.destroyed && written < 1024 * 1024 && socket.write(chunk)) written += chunk.length
          if (!socket.destroyed && written < 1024 * 1024) socket.once('drain', pump)
        }
        pump()
      })
    })
    const error = await rejection(requestLine(over, 'q', {timeoutMs: 5000}))
    expect(error.kind).toBe('protocol')
    expect(error.message).toContain('reply over 4096 bytes')
  })

  it("a server never sends a reply over 4 KiB: the handler's is replaced by a refusal", async () => {
    const path = join(dirOf(), 'big.sock')
    open.push(await serveLines(path, async () => JSON.stringify({ok: true, blob: 'z'.repeat(5000)})))
    const reply = await requestJsonReply(path, {action: 'x'})
    expect(reply).toEqual({ok: false, error: 'reply over 4096 bytes'})
  })

  it('a request line over the bound is refused without calling the handler', async () => {
    const path = join(dirOf(), 'req.sock')
    let calls = 0
    open.push(
      await serveLines(
        path,
        async () => {
          calls++
          return 'ok'
        },
        {maxLine: 100},
      ),
    )
    expect(JSON.parse(await requestLine(path, 'r'.repeat(101), {timeoutMs: 5000}))).toEqual({
      ok: false,
      error: 'request over 100 bytes',
    })
    expect(await requestLine(path, 'r'.repeat(100), {timeoutMs: 5000})).toBe('ok')
    expect(calls).toBe(1)
  })

  it('a stale socket file (its server was SIGKILLed) is unreachable to clients and replaced by the next server; a non-socket is never replaced', async () => {
    const dir = dirOf()
    const path = join(dir, 'stale.sock')
    const script = `require('node:net').createServer().listen(${JSON.stringify(path)}, () => process.kill(process.pid, 'SIGKILL'))`
    const killed = spawnSync(process.execPath, ['-e', script], {timeout: 20_000})
    expect(killed.signal).toBe('SIGKILL')
    expect(lstatSync(path).isSocket()).toBe(true)

    const error = await rejection(requestLine(path, 'anyone?', {timeoutMs: 5000}))
    expect(error.kind).toBe('unreachable')
    expect(error.code).toBe('ECONNREFUSED')

    open.push(await serveLines(path, async (line) => `fresh ${line}`))
    expect(await requestLine(path, 'hi', {timeoutMs: 5000})).toBe('fresh hi')

    const file = join(dir, 'not-a-socket')
    writeFileSync(file, 'keep me')
    await expect(serveLines(file, async () => 'x')).rejects.toThrow('is not a socket')
    expect(readFileSync(file, 'utf8')).toBe('keep me')
    expect((await rejection(requestLine(join(dir, 'missing.sock'), 'x', {timeoutMs: 5000}))).kind).toBe('unreachable')
  })

  it('a client that closes mid-line is dropped without calling the handler; the server goes on serving', async () => {
    const path = join(dirOf(), 'half.sock')
    const seen: string[] = []
    open.push(
      await serveLines(path, async (line) => {
        seen.push(line)
        return 'done'
      }),
    )
    const client = connect(path)
    await new Promise<void>((resolve) => client.once('connect', resolve))
    const closed = new Promise((resolve) => client.once('close', resolve))
    client.end('{"action": "half')
    await closed
    expect(await requestLine(path, 'whole', {timeoutMs: 5000})).toBe('done')
    expect(seen).toEqual(['whole'])
  })

  it('a server that closes mid-line: its bytes are the reply, which the JSON layer refuses; closing with nothing is a protocol error', async () => {
    const dir = dirOf()
    const half = join(dir, 'half-reply.sock')
    await rawServer(half, (socket) => socket.once('data', () => socket.end('{"ok": tr')))
    expect(await requestLine(half, 'q', {timeoutMs: 5000})).toBe('{"ok": tr')
    const notJson = await rejection(requestJsonReply(half, {action: 'q'}))
    expect(notJson.kind).toBe('protocol')
    expect(notJson.message).toContain('not JSON')

    const silent = join(dir, 'silent-close.sock')
    await rawServer(silent, (socket) => socket.once('data', () => socket.end()))
    const error = await rejection(requestLine(silent, 'q', {timeoutMs: 5000}))
    expect(error.kind).toBe('protocol')
    expect(error.message).toContain('without a reply')
  })

  it('a server that accepts and never answers is a timeout (the request may have been acted on), not unreachable', async () => {
    const path = join(dirOf(), 'mute.sock')
    let received = ''
    await rawServer(path, (socket) => socket.on('data', (d) => (received += d)))
    const started = Date.now()
    const error = await rejection(requestLine(path, 'are you there', {timeoutMs: 300}))
    expect(error.kind).toBe('timeout')
    expect(Date.now() - started).toBeGreaterThanOrEqual(290)
    expect(received).toBe('are you there\n')
  })

  it('close lets an in-flight reply finish, does not wait on an idle client, and removes the socket', async () => {
    const path = join(dirOf(), 'closing.sock')
    let release!: () => void
    const gate = new Promise<void>((resolve) => (release = resolve))
    let entered = false
    const server = await serveLines(path, async () => {
      entered = true
      await gate
      return 'late but sent'
    })
    const idle = connect(path)
    idle.on('error', () => {})
    await new Promise<void>((resolve) => idle.once('connect', resolve))
    const pending = requestLine(path, 'slow', {timeoutMs: 10_000})
    await waitFor(() => entered, 5000, 'the handler to start')
    const closing = server.close()
    release()
    expect(await pending).toBe('late but sent')
    const started = Date.now()
    await closing
    expect(Date.now() - started).toBeLessThan(5000)
    expect(existsSync(path)).toBe(false)
    idle.destroy()
  })
})

describe('a server that answers before it reads', () => {
  it('its reply is delivered, though it closed with the request unread (EPIPE on our side)', async () => {
    const path = join(dirOf(), 'early.sock')
    // Another process, as a service is: accept, reply, close, never read. Node's own server would read first.
    const script = [
      'import socket, os, sys',
      's = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(64)',
      'print("ready", flush=True)',
      'while True:',
      '    c, _ = s.accept(); c.sendall(b\'{"ok": true, "early": true}\\n\'); c.close()',
    ].join('\n')
    const server = spawn('python3', ['-c', script, path], {stdio: ['ignore', 'pipe', 'inherit']})
    try {
      await new Promise((resolve) => server.stdout!.once('data', resolve))
      // Many times, small and large requests: the close often lands before the request is written.
      for (const size of [10, 200_000]) {
        for (let i = 0; i < 20; i++) {
          const reply = await requestJsonReply(path, {action: 'status', input: 'x'.repeat(size)})
          expect(reply, `request ${i} of ${size} bytes`).toEqual({ok: true, early: true})
        }
      }
    } finally {
      server.kill('SIGKILL')
    }
  })
})

describe('socketPathIn', () => {
  it('keeps a short path in its dir; moves a deep one to an unforeseeable temp-dir name that isTempSocketOf knows', () => {
    expect(socketPathIn('/run/x', 'control.sock')).toBe('/run/x/control.sock')
    const deep = `/${'d'.repeat(100)}`
    const one = socketPathIn(deep, 'control.sock')
    const two = socketPathIn(deep, 'control.sock')
    expect(one).toMatch(/^.*\/actors-[0-9a-f]{16}-[0-9a-f]{16}-control\.sock$/)
    expect(one.startsWith(`${tmpdir()}/`)).toBe(true)
    expect(two).not.toBe(one)
    expect(isTempSocketOf(deep, one)).toBe(true)
    expect(isTempSocketOf(`${deep}x`, one)).toBe(false)
    // The stable name of earlier versions is still the dir's; another dir's is not.
    const hash = createHash('sha256').update(join(deep, 'control.sock')).digest('hex').slice(0, 16)
    expect(isTempSocketOf(deep, join(tmpdir(), `actors-${hash}-control.sock`))).toBe(true)
    expect(isTempSocketOf(deep, join(tmpdir(), `actors-${'0'.repeat(16)}-control.sock`))).toBe(false)
    expect(isTempSocketOf(deep, join('/elsewhere', `actors-${hash}-control.sock`))).toBe(false)
  })
})
