/**
 * `actors mcp --owner O` acts only on Runs of owner O (SPEC: Authority over
 * files and Runs): the SDK's Client against the built bin/actors, with real
 * Runs of another owner in the same state root. Every refusal is a tool error
 * and leaves the other owner's files as they were.
 */
import {Client} from '@modelcontextprotocol/client'
import {StdioClientTransport} from '@modelcontextprotocol/client/stdio'
import {readFileSync} from 'node:fs'
import {join} from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'
import {actors, BIN, cliEnv, homesPerTest, readJson, waitFor, waitForResult} from './helpers.js'

const home = homesPerTest('actors-mcp-owner-')
let clients: Client[] = []

afterEach(async () => {
  for (const client of clients) await client.close().catch(() => {})
  clients = []
})

async function connect(h: string, flags: string[]): Promise<Client> {
  const env = Object.fromEntries(Object.entries(cliEnv(h)).filter((e): e is [string, string] => e[1] !== undefined))
  const client = new Client({name: 'actors-test', version: '1.0.0'})
  await client.connect(
    new StdioClientTransport({command: process.execPath, args: [BIN, 'mcp', ...flags], env, stderr: 'pipe'}),
  )
  clients.push(client)
  return client
}

type ToolResult = {content: Array<{type: string; text: string}>; structuredContent?: any; isError?: boolean}

const call = async (client: Client, name: string, args: Record<string, unknown>) =>
  (await client.callTool({name, arguments: args}, {timeout: 60_000})) as ToolResult

/** Every file of a Run's state dir that a refused call could have changed. */
function snapshot(h: string, id: string): string {
  const dir = join(h, 'runs', id)
  return ['run.json', 'result.json', 'trace.jsonl', 'controls.jsonl']
    .map((f) => {
      try {
        return readFileSync(join(dir, f), 'utf8')
      } catch {
        return ''
      }
    })
    .join('\n--\n')
}

describe('actors mcp --owner', () => {
  it("refuses send, rerun, control, close and a relaunch by name on another owner's Run, and changes nothing", async () => {
    const h = home()
    const done = actors(h, ['run', '--name', 'bobdone', '--json', 'hello'], {env: {ACTORS_OWNER: 'bob'}})
    expect(done.code, done.stderr).toBe(0)
    await waitForResult(done.json.state_dir)
    const live = actors(h, ['run', '--name', 'boblive', '--json', '--', 'sleep', '60'], {env: {ACTORS_OWNER: 'bob'}})
    expect(live.code, live.stderr).toBe(0)
    // The supervisor's own writes (pids, identities) are done before the snapshot.
    await waitFor(() => readJson(join(h, 'runs', 'boblive', 'run.json')).children_processes)
    const before = {bobdone: snapshot(h, 'bobdone'), boblive: snapshot(h, 'boblive')}

    const client = await connect(h, ['--owner', 'mallory', '--allow-adhoc'])
    const attempts: Array<[string, Record<string, unknown>]> = [
      ['send', {run: 'bobdone', message: 'resume for me'}],
      ['rerun', {run: 'bobdone'}],
      ['control', {run: 'boblive', action: 'stop'}],
      ['control', {run: 'boblive', action: 'kill'}],
      // close stops a live Run first, then retires its id: neither may happen to another owner's Run.
      ['close', {run: 'boblive'}],
      ['close', {run: 'bobdone'}],
      ['send', {run: 'boblive', message: 'hi'}],
      ['run', {command: ['true'], name: 'bobdone'}],
    ]
    for (const [tool, args] of attempts) {
      const result = await call(client, tool, args)
      expect(result.isError, `${tool} ${JSON.stringify(args)}: ${result.content[0]?.text}`).toBe(true)
      expect(result.content[0].text).toContain('belongs to owner bob')
    }
    expect(snapshot(h, 'bobdone')).toBe(before.bobdone)
    expect(snapshot(h, 'boblive')).toBe(before.boblive)
    expect(readJson(join(h, 'runs', 'bobdone', 'run.json')).generation ?? 1).toBe(1)
    expect(readJson(join(h, 'runs', 'boblive', 'run.json')).status).toBe('running')

    // Its own Runs it still steers: a Run it launched, then resumed with send.
    const mine = await call(client, 'run', {command: ['true'], name: 'mine'})
    expect(mine.isError, mine.content[0]?.text).toBeFalsy()
    await waitForResult(join(h, 'runs', 'mine'))
    const resumed = await call(client, 'send', {run: 'mine', message: 'again'})
    expect(resumed.isError, resumed.content[0]?.text).toBeFalsy()
    expect(resumed.structuredContent.delivered).toBe('resumed')
  }, 60_000)
})
