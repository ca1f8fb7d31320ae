/**
 * A raw JSON-RPC session with the built `actors mcp`: lines written to its
 * stdin, every answer parsed from its stdout, for tests at the line level.
 */
import {spawn, type ChildProcessWithoutNullStreams} from 'node:child_process'
import {BIN, cliEnv, waitFor} from './helpers.js'

let servers: ChildProcessWithoutNullStreams[] = []

/** SIGKILL every server opened since the last call (an afterEach). */
export function killRawServers(): void {
  for (const server of servers) server.kill('SIGKILL')
  servers = []
}

export interface RawSession {
  server: ChildProcessWithoutNullStreams
  replies: any[]
  stderr: () => string
  exited: () => number | null | undefined
  send(line: string | Buffer): void
  reply(id: unknown, timeoutMs?: number): Promise<any>
}

export function open(h: string, flags: string[] = []): RawSession {
  const server = spawn(process.execPath, [BIN, 'mcp', ...flags], {env: cliEnv(h)})
  servers.push(server)
  const replies: any[] = []
  let out = ''
  let err = ''
  let code: number | null | undefined
  server.stdout.on('data', (chunk: Buffer) => {
    out += chunk.toString('utf8')
    for (let nl = out.indexOf('\n'); nl !== -1; nl = out.indexOf('\n')) {
      replies.push(JSON.parse(out.slice(0, nl)))
      out = out.slice(nl + 1)
    }
  })
  server.stderr.on('data', (chunk: Buffer) => (err += chunk.toString('utf8')))
  server.on('exit', (c) => (code = c))
  server.stdin.on('error', () => {})
  return {
    server,
    replies,
    stderr: () => err,
    exited: () => code,
    send: (line) => server.stdin.write(typeof line === 'string' ? line + '\n' : line),
    reply: (id, timeoutMs = 20_000) =>
      waitFor(() => replies.find((r) => r.id === id), timeoutMs, `the reply to ${JSON.stringify(id)} (stderr: ${err})`),
  }
}

export const INIT = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: {protocolVersion: '2025-06-18', capabilities: {}, clientInfo: {name: 't', version: '1'}},
})
export const INITIALIZED = JSON.stringify({jsonrpc: '2.0', method: 'notifications/initialized'})
export const ping = (id: number) => JSON.stringify({jsonrpc: '2.0', id, method: 'ping'})
export const toolCall = (id: number, name: string, args: unknown) =>
  JSON.stringify({jsonrpc: '2.0', id, method: 'tools/call', params: {name, arguments: args}})

export async function initialized(h: string, flags: string[] = []): Promise<RawSession> {
  const session = open(h, flags)
  session.send(INIT)
  await session.reply(1)
  session.send(INITIALIZED)
  return session
}
