/**
 * `actors mcp` at the line level (SPEC: Authority over files and Runs):
 * raw JSON-RPC lines written to the built bin/actors, answers read from its
 * stdout. Bad JSON gets -32700, an invalid request -32600, invalid tool
 * arguments -32602 with the CLI's error shape, and a line over 4 MiB is
 * refused and skipped in linear time; the session goes on after each.
 */
import {existsSync, readdirSync} from 'node:fs'
import {join} from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'
import {homesPerTest} from './helpers.js'
import {INIT, INITIALIZED, initialized, killRawServers, open, ping, toolCall} from './mcp-raw.js'

const home = homesPerTest('actors-mcp-lines-')
afterEach(killRawServers)

describe('actors mcp: bad lines get JSON-RPC errors and the session goes on', () => {
  it('a line that is not JSON gets -32700; an invalid request -32600 (with its id); then a ping is still answered', async () => {
    const session = await initialized(home())
    session.send('garbage, not json')
    session.send('{"id":9,"method":"tools/call","params":"hello"}')
    session.send('{"jsonrpc":"2.0","id":10,"method":"tools/call","params":"hello"}')
    session.send('[1, 2]')
    session.send(ping(11))
    await session.reply(11)
    const errors = session.replies.filter((r) => r.error)
    expect(errors.map((r) => [r.id, r.error.code])).toEqual([
      [null, -32700],
      [9, -32600],
      [10, -32600],
      [null, -32600],
    ])
    for (const r of errors)
      expect(r.error.data.error).toMatchObject({message: expect.any(String), exit_code: 2, fix: expect.any(String)})
  })

  it('invalid tool arguments get -32602 with {error: {message, exit_code, fix}}, naming the argument', async () => {
    const session = await initialized(home())
    session.send(toolCall(20, 'logs', {run: ['x']}))
    const r = await session.reply(20)
    expect(r.error.code).toBe(-32602)
    expect(r.error.data.error).toMatchObject({exit_code: 2, fix: expect.stringContaining('inputSchema')})
    expect(r.error.data.error.message).toContain('run:')
  })

  it('a list given for a string arg of a Recipe is refused (exit 2), not turned into JSON text, and nothing starts', async () => {
    const h = home()
    const session = await initialized(h)
    session.send(toolCall(30, 'run', {recipe: 'hello', values: {name: ['a', 'b']}}))
    const r = await session.reply(30)
    expect(r.result.isError).toBe(true)
    expect(r.result.structuredContent.error).toMatchObject({exit_code: 2})
    expect(r.result.structuredContent.error.message).toContain('is of type string')
    expect(existsSync(join(h, 'runs')) ? readdirSync(join(h, 'runs')) : []).toEqual([])
  })

  it('a 20 MB line, before and after the handshake, is refused and skipped quickly; the server stays up', async () => {
    const h = home()
    const big = Buffer.alloc(20 * 1024 * 1024, 'a')
    const session = open(h)
    const started = Date.now()
    // Before the handshake: in pieces, as a pipe delivers it.
    for (let i = 0; i < big.length; i += 64 * 1024) session.send(big.subarray(i, i + 64 * 1024))
    session.send('\n')
    session.send(INIT)
    await session.reply(1, 60_000)
    const beforeMs = Date.now() - started
    session.send(INITIALIZED)
    const after = Date.now()
    session.send(
      Buffer.concat([
        Buffer.from('{"jsonrpc":"2.0","id":40,"method":"ping","params":{"x":"'),
        big,
        Buffer.from('"}}\n'),
      ]),
    )
    session.send(ping(41))
    await session.reply(41, 60_000)
    const afterMs = Date.now() - after
    console.log(
      `20 MB line skipped: before the handshake ${beforeMs} ms to the initialize answer, after it ${afterMs} ms to the next answer`,
    )
    expect(session.replies.find((r) => r.id === 40)).toBeUndefined()
    const refusals = session.replies.filter((r) => r.error?.code === -32600 && r.id === null)
    expect(refusals).toHaveLength(2)
    expect(refusals[0].error.message).toContain('over 4194304 bytes')
    expect(session.stderr()).toContain('refused a request line over')
    expect(session.exited()).toBeUndefined()
    expect(beforeMs).toBeLessThan(15_000)
    expect(afterMs).toBeLessThan(15_000)
  }, 120_000)
})
