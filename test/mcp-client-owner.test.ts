/**
 * An agent's own owner (SPEC: Agents over MCP): without --owner and without
 * ACTORS_OWNER, `actors mcp` acts as `mcp-CLIENT` from the client's
 * `initialize` name. A person's `actors wait` in a shell never collects the
 * agent's Runs, and a later session of the same host does. The SDK's Client
 * against the built bin/actors, real Runs in a temp state root.
 */
import {Client} from '@modelcontextprotocol/client'
import {StdioClientTransport} from '@modelcontextprotocol/client/stdio'
import {join} from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'
import {clientOwner} from '../src/lib/surface/mcp/policy.js'
import {actors, BIN, cliEnv, homesPerTest, readJson, waitForResult} from './helpers.js'

const home = homesPerTest('actors-mcp-client-owner-')
let clients: Client[] = []

afterEach(async () => {
  for (const client of clients) await client.close().catch(() => {})
  clients = []
})

/** A session of a client named `name`, with no --owner and no ACTORS_OWNER (cliEnv clears it). */
async function connect(h: string, name: string, extraEnv: Record<string, string> = {}): Promise<Client> {
  const env = Object.fromEntries(
    Object.entries(cliEnv(h, extraEnv)).filter((e): e is [string, string] => e[1] !== undefined),
  )
  const client = new Client({name, version: '1.0.0'})
  await client.connect(new StdioClientTransport({command: process.execPath, args: [BIN, 'mcp'], env, stderr: 'pipe'}))
  clients.push(client)
  return client
}

type ToolResult = {content: Array<{type: string; text: string}>; structuredContent?: any; isError?: boolean}

const call = async (client: Client, name: string, args: Record<string, unknown>) =>
  (await client.callTool({name, arguments: args}, {timeout: 60_000})) as ToolResult

const runsOf = (batch: {rows: Array<{run: string}>}) => batch.rows.map((row) => row.run).sort()

describe('actors mcp without --owner', () => {
  it('reduces the client name to [a-z0-9-], bounded, with mcp-client when nothing is left', () => {
    expect(clientOwner('Claude Code')).toBe('mcp-claude-code')
    expect(clientOwner('  VS Code / Copilot!! ')).toBe('mcp-vs-code-copilot')
    expect(clientOwner('a_b.c')).toBe('mcp-a-b-c')
    expect(clientOwner('---')).toBe('mcp-client')
    expect(clientOwner('')).toBe('mcp-client')
    expect(clientOwner(undefined)).toBe('mcp-client')
    expect(clientOwner('日本語')).toBe('mcp-client')
    const long = clientOwner(`${'x'.repeat(59)} tail ${'y'.repeat(300)}`)
    expect(long).toBe(`mcp-${'x'.repeat(59)}`)
  })

  it("acts as mcp-CLIENT: a shell's wait does not collect the agent's Runs, a later session of the same client does", async () => {
    const h = home()
    const shell = actors(h, ['run', '--name', 'shellrun', '--json', 'hello'])
    expect(shell.code, shell.stderr).toBe(0)

    const agent = await connect(h, 'Claude Code')
    const launched = await call(agent, 'run', {recipe: 'hello', name: 'agentrun'})
    expect(launched.isError, launched.content[0]?.text).toBeFalsy()
    expect(readJson(join(h, 'runs', 'agentrun', 'run.json')).owner).toBe('mcp-claude-code')
    await waitForResult(launched.structuredContent.state_dir)
    await waitForResult(shell.json.state_dir)
    // The agent's own Runs only: the shell's Run is another owner's.
    const refused = await call(agent, 'send', {run: 'shellrun', message: 'x'})
    expect(refused.content[0].text).toContain(
      'belongs to owner default; this server acts only for owner mcp-claude-code',
    )
    await agent.close()

    // The person's wait in a shell (owner default) gets the shell's Run and never the agent's.
    const person = actors(h, ['wait', '--json', '--timeout', '5s'])
    expect(person.code, person.stderr).toBe(0)
    expect(runsOf(person.json)).toEqual(['shellrun'])

    // A restarted agent of the same host (same client name) finds its Run, still unreported.
    const again = await connect(h, 'Claude Code')
    const batch = await call(again, 'wait', {timeout: '5s'})
    expect(batch.isError, batch.content[0]?.text).toBeFalsy()
    expect(runsOf(batch.structuredContent)).toEqual(['agentrun'])

    // Another host's agent has an owner of its own: nothing of either is left for it.
    const other = await connect(h, 'Cursor')
    const none = await call(other, 'wait', {timeout: '0'})
    expect(none.structuredContent.members).toBe(0)
  })

  it('ACTORS_OWNER still wins over the client name (and a Run id may hold dots)', async () => {
    const h = home()
    const byEnv = await connect(h, 'Claude Code', {ACTORS_OWNER: 'review-bot'})
    const launched = await call(byEnv, 'run', {recipe: 'hello', name: 'env.run.1'})
    expect(launched.isError, launched.content[0]?.text).toBeFalsy()
    expect(readJson(join(h, 'runs', 'env.run.1', 'run.json')).owner).toBe('review-bot')
  })
})
