/**
 * The `actors mcp` greeter (src/lib/mcp/greeter.ts): it answers initialize,
 * tools/list and ping before the SDK has loaded, with the answers the build
 * recorded from the SDK, then the SDK takes the session over. These tests
 * speak raw JSON-RPC lines to the built binary and compare every answer with
 * the SDK's own (ACTORS_MCP_GREET=0), byte for byte; and they check that the
 * fallbacks (no or damaged greetings, rejected code caches) still serve.
 */
import {Client} from '@modelcontextprotocol/client'
import {StdioClientTransport} from '@modelcontextprotocol/client/stdio'
import {spawn} from 'node:child_process'
import {readFileSync, rmSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {PassThrough} from 'node:stream'
import {afterAll, afterEach, beforeAll, describe, expect, it} from 'vitest'
import {greet, parseGreetings, type Greetings} from '../src/lib/mcp/greeter.js'
import {BIN, cliEnv, packageWithout, removeDir, removeHome, ROOT, tempDir} from './helpers.js'

const initialize = (id: number | string, protocolVersion: string, extra: object = {}) => ({
  jsonrpc: '2.0',
  id,
  method: 'initialize',
  params: {protocolVersion, capabilities: {roots: {listChanged: true}}, clientInfo: {name: 'greeter-test', version: '1'}, ...extra},
})
const initialized = {jsonrpc: '2.0', method: 'notifications/initialized'}
const request = (id: number | string, method: string, params?: object) => ({jsonrpc: '2.0', id, method, ...(params ? {params} : {})})
const recipesCall = (id: number | string) => request(id, 'tools/call', {name: 'recipes', arguments: {}})

/** For tests that start the server many times: a session can take seconds on a loaded machine. */
const SESSIONS_TIMEOUT = 300_000

interface Exchange {
  /** Every line the server wrote to stdout, in order. */
  lines: string[]
  stderr: string
}

/**
 * Send `steps` to `actors mcp` (each step one write: a message or several
 * pipelined; a string is written as the raw line), waiting after each step
 * for the answers to its requests; then close stdin and wait for the server
 * to exit.
 */
function exchange(home: string, steps: Array<Array<object | string>>, env: NodeJS.ProcessEnv = {}, bin = BIN): Promise<Exchange> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bin, 'mcp'], {env: cliEnv(home, {ACTORS_DEBUG: '1', ...env}), stdio: ['pipe', 'pipe', 'pipe']})
    const lines: string[] = []
    let stderr = ''
    let buffered = ''
    let step = 0
    let awaited = new Set<unknown>()
    const next = () => {
      if (step === steps.length) return child.stdin.end()
      const messages = steps[step++]
      awaited = new Set(messages.filter((m) => typeof m === 'object' && 'id' in m).map((m) => (m as {id: unknown}).id))
      child.stdin.write(messages.map((m) => (typeof m === 'string' ? m : JSON.stringify(m)) + '\n').join(''))
      if (awaited.size === 0) next()
    }
    child.stderr.on('data', (chunk) => (stderr += chunk))
    child.stdout.on('data', (chunk) => {
      buffered += chunk
      const complete = buffered.split('\n')
      buffered = complete.pop()!
      for (const line of complete) {
        lines.push(line)
        awaited.delete((JSON.parse(line) as {id?: unknown}).id)
      }
      if (awaited.size === 0) next()
    })
    const timer = setTimeout(() => (child.kill(), reject(new Error(`no answer in time; stdout: ${lines.join('\n')}\nstderr: ${stderr}`))), 60_000)
    child.on('error', reject)
    child.on('exit', () => (clearTimeout(timer), resolve({lines, stderr})))
    next()
  })
}

/** The same session greeted and served by the SDK alone: the answers must be the same bytes (tool results aside, which name times). */
async function expectSameAsSdk(home: string, steps: Array<Array<object | string>>, greetedRequests: number): Promise<Exchange> {
  const greeted = await exchange(home, steps)
  const sdk = await exchange(home, steps, {ACTORS_MCP_GREET: '0'})
  expect(greeted.stderr).not.toMatch(/differs/)
  expect(greeted.stderr).toContain(`greeted ${greetedRequests} request(s)`)
  expect(sdk.stderr).not.toContain('greeted')
  const comparable = (lines: string[]) => lines.map((line) => (line.includes('"structuredContent"') ? JSON.parse(line).id : line))
  expect(comparable(greeted.lines)).toEqual(comparable(sdk.lines))
  return greeted
}

describe('actors mcp greeter', () => {
  let home: string
  beforeAll(() => {
    home = tempDir()
  })
  afterAll(() => removeHome(home))

  it('answers initialize, tools/list and ping exactly as the SDK does, then the SDK serves the session', async () => {
    const steps = [[initialize(1, '2025-11-25')], [initialized, request(2, 'ping')], [request(3, 'tools/list')], [recipesCall(4)], [request(5, 'ping')]]
    const {lines} = await expectSameAsSdk(home, steps, 3)
    expect(lines.map((line) => JSON.parse(line).id)).toEqual([1, 2, 3, 4, 5])
    expect(JSON.parse(lines[2]).result.tools).toHaveLength(9)
    expect(JSON.parse(lines[3]).result.structuredContent.recipes.length).toBeGreaterThan(0)
  })

  it('greets every protocol version the SDK accepts, with string ids and pipelined messages', async () => {
    const versions = Object.keys((JSON.parse(readFileSync(join(ROOT, 'dist', 'mcp-greetings.json'), 'utf8')) as Greetings).answers)
    expect(versions).toContain('2025-11-25')
    for (const version of versions) await expectSameAsSdk(home, [[initialize('a', version), initialized, request('b', 'tools/list'), recipesCall('c')]], 2)
    await expectSameAsSdk(home, [[initialize(7, '2025-06-18')], [initialized, request(8, 'tools/list')]], 2)
  }, SESSIONS_TIMEOUT)

  it('leaves everything else to the SDK: other versions, parameters, requests before initialize, bad JSON', async () => {
    await expectSameAsSdk(home, [[initialize(1, '1999-01-01')], [initialized, request(2, 'tools/list')]], 0)
    await expectSameAsSdk(home, [[request(1, 'ping')], [initialize(2, '2025-11-25')]], 0)
    await expectSameAsSdk(home, [[initialize(1, '2025-11-25', {_meta: {progressToken: 1}})]], 0)
    // Greeted initialize, then a tools/list with a cursor and a duplicate id: both the SDK's.
    await expectSameAsSdk(home, [[initialize(1, '2025-11-25')], [initialized, request(2, 'tools/list', {cursor: 'x'})], [request(1, 'ping')]], 1)
    await expectSameAsSdk(home, [[initialize(1, '2025-11-25')], ['{"jsonrpc": "2.0", "id": 2, "meth', recipesCall(3)]], 1)
  }, SESSIONS_TIMEOUT)

  it('exits when stdin closes during the greeting, without loading the SDK', async () => {
    const {lines, stderr} = await exchange(home, [[initialize(1, '2025-11-25')]])
    expect(lines).toHaveLength(1)
    expect(stderr).toBe('')
  })
})

describe('actors mcp fallbacks', () => {
  let pkg: string
  let home: string
  let client: Client | undefined
  beforeAll(() => {
    pkg = packageWithout([])
    home = tempDir()
  })
  afterEach(async () => {
    await client?.close()
    client = undefined
  })
  afterAll(() => {
    removeHome(home)
    removeDir(pkg)
  })

  /** A full session with the SDK's client: list the tools and call one. */
  async function serves(): Promise<string> {
    const env = Object.fromEntries(Object.entries(cliEnv(home, {ACTORS_DEBUG: '1'})).filter((e): e is [string, string] => e[1] !== undefined))
    const transport = new StdioClientTransport({command: process.execPath, args: [join(pkg, 'bin', 'actors'), 'mcp'], env, stderr: 'pipe'})
    let stderr = ''
    transport.stderr?.on('data', (chunk) => (stderr += chunk))
    client = new Client({name: 'fallback-test', version: '1'})
    await client.connect(transport)
    expect((await client.listTools()).tools).toHaveLength(9)
    const result = (await client.callTool({name: 'inspect', arguments: {}})) as {isError?: boolean; structuredContent?: {runs?: unknown[]}}
    expect(result.isError).toBeFalsy()
    expect(result.structuredContent?.runs).toEqual([])
    await client.close()
    client = undefined
    return stderr
  }

  it('serves through the greeter, and without it when the recorded greetings are damaged, missing or of another version', async () => {
    expect(await serves()).toContain('greeted 2 request(s)')
    const greetings = join(pkg, 'dist', 'mcp-greetings.json')
    writeFileSync(greetings, '{"version": "0.1.0", "answers": {"2025-11-25": {"initialize": "{not json"}}}')
    expect(await serves()).not.toContain('greeted')
    writeFileSync(greetings, JSON.stringify({version: '0.0.0-other', answers: {}}))
    expect(await serves()).not.toContain('greeted')
    rmSync(greetings)
    expect(await serves()).not.toContain('greeted')
  }, SESSIONS_TIMEOUT)

  it('serves when the code caches are corrupt (rejected by V8) and rewrites them', async () => {
    await serves()
    const caches = ['mcp.cache', 'mcp-server.cache'].map((name) => join(pkg, 'dist', name))
    for (const cache of caches) writeFileSync(cache, 'not a V8 code cache')
    const stderr = await serves()
    expect(stderr).not.toMatch(/error/i)
    for (const cache of caches) expect(readFileSync(cache, 'utf8'), cache).not.toBe('not a V8 code cache')
    await serves()
  }, SESSIONS_TIMEOUT)
})

describe('greet()', () => {
  const greetings: Greetings = {
    version: '1',
    answers: {v1: {initialize: '{"result":{"protocolVersion":"v1"},"jsonrpc":"2.0","id":0}', 'tools/list': '{"result":{"tools":[]},"jsonrpc":"2.0","id":0}', ping: '{"result":{},"jsonrpc":"2.0","id":0}'}},
  }

  it('replays every byte it read to the SDK, then the rest of stdin, and names what it answered', async () => {
    const stdin = new PassThrough()
    const sent: string[] = []
    const greeting = greet(greetings, stdin, (line, written) => (sent.push(line), written()))
    const first = `${JSON.stringify(initialize(1, 'v1'))}\r\n\n${JSON.stringify(initialized)}\n${JSON.stringify(request(2, 'tools/list'))}\n{"jsonrpc":"2.0","id":3,"met`
    stdin.write(first)
    const handover = await greeting
    if (handover === 'closed') throw new Error('closed')
    expect(sent).toEqual(['{"result":{"protocolVersion":"v1"},"jsonrpc":"2.0","id":1}', '{"result":{"tools":[]},"jsonrpc":"2.0","id":2}'])
    expect([...handover.answered]).toEqual([
      [1, sent[0]],
      [2, sent[1]],
    ])
    stdin.end('hod":"ping"}\n')
    let replayed = ''
    for await (const chunk of handover.input) replayed += chunk
    expect(replayed).toBe(`${first}hod":"ping"}\n`)
  })

  it("is 'closed' when stdin ends first, and accepts only greetings of its own version", async () => {
    const stdin = new PassThrough()
    const greeting = greet(greetings, stdin, () => {})
    stdin.end()
    expect(await greeting).toBe('closed')
    expect(parseGreetings(JSON.stringify(greetings), '1')).toEqual(greetings)
    expect(parseGreetings(JSON.stringify(greetings), '2')).toBeUndefined()
    expect(parseGreetings('{', '1')).toBeUndefined()
  })
})
