/**
 * `actors mcp` end to end: the SDK's own Client over StdioClientTransport
 * against the built bin/actors, with real Runs in a temp state root. Every
 * tool result is checked against the 64 KiB cap (text + structured content).
 */
import {Client} from '@modelcontextprotocol/client'
import {StdioClientTransport} from '@modelcontextprotocol/client/stdio'
import {spawn} from 'node:child_process'
import {cpSync, existsSync, readFileSync, readdirSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {randomUUID} from 'node:crypto'
import {afterEach, describe, expect, it} from 'vitest'
import {builtJsonSchemas, lazyInputSchema, toolJsonSchemas} from '../src/lib/surface/mcp/input-schema.js'
import {TOOLS} from '../src/lib/surface/mcp/tools.js'
import {actors, BIN, cliEnv, homeWithRecipes, processAlive, readJson, removeHome, waitFor} from './helpers.js'

const CAP = 64 * 1024
const GATE_RECIPE =
  "description: waits until a file exists\nargs:\n  - file:path\ntemplate: [sh, -c, 'until [ -e \"$0\" ]; do sleep 0.05; done; echo opened', '{file}']\n"

interface Session {
  client: Client
  transport: StdioClientTransport
}
let sessions: Session[] = []
let homes: string[] = []

afterEach(async () => {
  for (const s of sessions) await s.client.close().catch(() => {})
  sessions = []
  for (const home of homes) removeHome(home)
  homes = []
})

function newHome(): {home: string; recipes: string} {
  const made = homeWithRecipes({'gate.yaml': GATE_RECIPE})
  homes.push(made.home)
  return made
}

async function connect(home: string, flags: string[] = []): Promise<Session> {
  const env = Object.fromEntries(Object.entries(cliEnv(home)).filter((e): e is [string, string] => e[1] !== undefined))
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [BIN, 'mcp', ...flags],
    env,
    stderr: 'pipe',
  })
  const client = new Client({name: 'actors-test', version: '1.0.0'})
  await client.connect(transport)
  const session = {client, transport}
  sessions.push(session)
  return session
}

type ToolResult = {content: Array<{type: string; text: string}>; structuredContent?: any; isError?: boolean}

/** Call a tool; every result must fit the cap. */
async function call(
  client: Client,
  name: string,
  args: Record<string, unknown> = {},
  options: Parameters<Client['callTool']>[1] = {},
): Promise<ToolResult> {
  const result = (await client.callTool({name, arguments: args}, {timeout: 120_000, ...options})) as ToolResult
  const bytes =
    Buffer.byteLength(JSON.stringify(result.content)) +
    Buffer.byteLength(JSON.stringify(result.structuredContent ?? null))
  expect(bytes, `${name} result bytes`).toBeLessThanOrEqual(CAP)
  return result
}

const runIds = (home: string) =>
  existsSync(join(home, 'runs')) ? readdirSync(join(home, 'runs')).filter((d) => !d.startsWith('.')) : []

describe('actors mcp', () => {
  it('lists the tools with inputs that mirror the CLI', async () => {
    const {home} = newHome()
    const {client} = await connect(home)
    const {tools} = await client.listTools()
    expect(tools.map((t) => t.name).sort()).toEqual([
      'close',
      'control',
      'inspect',
      'lock',
      'logs',
      'recipes',
      'rerun',
      'run',
      'send',
      'wait',
    ])
    const byName = Object.fromEntries(tools.map((t) => [t.name, t]))
    const run = byName.run.inputSchema as any
    expect(Object.keys(run.properties)).toEqual(
      expect.arrayContaining(['recipe', 'command', 'values', 'name', 'timeout', 'silent']),
    )
    expect(run.properties.values.type).toBe('object')
    expect(run.properties.timeout.type).toBe('string')
    expect((byName.wait.inputSchema as any).properties.timeout.type).toBe('string')
    expect((byName.logs.inputSchema as any).properties.limit_bytes.maximum).toBe(CAP)
    for (const tool of tools) expect(tool.description!.length, tool.name).toBeGreaterThan(80)
    expect(byName.inspect.annotations?.readOnlyHint).toBe(true)
    expect(Object.keys((byName.lock.inputSchema as any).properties)).toEqual(
      expect.arrayContaining(['op', 'name', 'slots', 'lease', 'wait', 'holder']),
    )
  })

  it("lists the JSON Schemas the build wrote, the same as converting the tools' inputs now", async () => {
    const fresh = toolJsonSchemas(TOOLS)
    // The build's file is what a session shows; a stale one (src changed, no rebuild) fails here.
    expect(builtJsonSchemas()).toEqual(fresh)
    const {home} = newHome()
    const {client} = await connect(home)
    const {tools} = await client.listTools()
    for (const tool of tools) expect(tool.inputSchema, tool.name).toEqual(fresh[tool.name])
    // Without the file, each tool's schema is converted when listed, to the same JSON.
    for (const tool of TOOLS) {
      const listed = lazyInputSchema(tool, {})['~standard'].jsonSchema.input({target: 'draft-2020-12'})
      expect(listed, tool.name).toEqual(fresh[tool.name])
    }
  })

  it('runs a Recipe with values, waits for it and returns its row; the CLI documents match', async () => {
    const {home} = newHome()
    const {client} = await connect(home, ['--allow', 'hello,gate'])
    const launched = await call(client, 'run', {recipe: 'hello', values: {name: 'Ada'}})
    expect(launched.isError).toBeFalsy()
    expect(launched.structuredContent).toMatchObject({
      run: expect.stringMatching(/^hello-/),
      status: expect.stringMatching(/running|done/),
    })
    expect(launched.content[0].text).toContain(launched.structuredContent.run)
    const waited = await call(client, 'wait', {runs: [launched.structuredContent.run]})
    expect(waited.isError).toBeFalsy()
    expect(waited.structuredContent).toMatchObject({
      schema: 'actors-batch-v1',
      members: 1,
      timed_out: false,
      counts: {done: 1},
    })
    expect(waited.structuredContent.rows[0]).toMatchObject({
      run: launched.structuredContent.run,
      status: 'done',
      output: 'hello, Ada\n',
    })
    expect(waited.content[0].text).toMatch(/1 finished \(1 done\)/)
    // The text carries the result too (hosts that show a model only text): the summary line, then the document.
    const [line, ...rest] = waited.content[0].text.split('\n')
    expect(line).toMatch(/1 finished/)
    expect(JSON.parse(rest.join('\n'))).toEqual(waited.structuredContent)
    // The logs tool's text is the log itself under a one-line header.
    const log = await call(client, 'logs', {run: launched.structuredContent.run})
    expect(log.content[0].text).toBe('stdout bytes 0-11 of 11 (eof)\nhello, Ada\n')
    // Reported once: the next wait (of the same owner) has nothing.
    const again = await call(client, 'wait', {timeout: '0'})
    expect(again.structuredContent.members).toBe(0)
    // inspect of one Run is the CLI's document.
    const inspected = await call(client, 'inspect', {run: launched.structuredContent.run})
    const cli = JSON.parse(actors(home, ['inspect', launched.structuredContent.run, '--json']).stdout)
    expect(inspected.structuredContent).toEqual(cli)
    const described = await call(client, 'recipes', {name: 'hello'})
    expect(described.structuredContent).toEqual({
      ...JSON.parse(actors(home, ['recipes', 'hello', '--json']).stdout),
      allowed: true,
    })
  })

  it('refuses what the policy does not allow, naming the rule, and starts nothing', async () => {
    const {home} = newHome()
    const {client} = await connect(home, ['--allow', 'hel*'])
    const notAllowed = await call(client, 'run', {recipe: 'sleep', values: {seconds: 1}})
    expect(notAllowed.isError).toBe(true)
    expect(notAllowed.content[0].text).toMatch(/refused by policy --allow hel\*: Recipe "sleep"/)
    expect(notAllowed.content[0].text).toMatch(/fix: /)
    expect(notAllowed.structuredContent.error).toMatchObject({exit_code: 5, policy: 'allow'})
    const adHoc = await call(client, 'run', {command: ['touch', join(home, 'touched')]})
    expect(adHoc.isError).toBe(true)
    expect(adHoc.content[0].text).toMatch(/refused by policy --allow-adhoc/)
    const byPath = await call(client, 'run', {
      recipe: join(home, 'recipes', 'gate.yaml'),
      values: {file: '/nonexistent'},
    })
    expect(byPath.isError).toBe(true)
    expect(byPath.content[0].text).toMatch(/--allow-adhoc: Recipe file/)
    expect(runIds(home)).toEqual([])
    expect(existsSync(join(home, 'touched'))).toBe(false)
    // The recipes tool says which are allowed.
    const listed = await call(client, 'recipes')
    const allowed = Object.fromEntries(listed.structuredContent.recipes.map((r: any) => [r.name, r.allowed]))
    expect(allowed).toMatchObject({hello: true, sleep: false})
    // Errors carry the CLI's message and fix.
    const missing = await call(client, 'inspect', {run: 'no-such-run'})
    expect(missing.isError).toBe(true)
    expect(missing.content[0].text).toMatch(/Run no-such-run not found[\s\S]*fix: list Runs/)
    expect(missing.structuredContent.error.exit_code).toBe(4)
  })

  it('wait times out with the batch, timed_out and pending, and sends progress meanwhile; control stop ends the Run', async () => {
    const {home} = newHome()
    const {client} = await connect(home)
    const launched = await call(client, 'run', {recipe: 'gate', values: {file: join(home, 'never')}})
    const run = launched.structuredContent.run
    const progress: unknown[] = []
    const waited = await call(client, 'wait', {timeout: '1500ms'}, {onprogress: (p) => progress.push(p)})
    expect(waited.isError).toBeFalsy()
    expect(waited.structuredContent).toMatchObject({timed_out: true, members: 0, pending_count: 1})
    expect(waited.structuredContent.pending).toEqual([expect.objectContaining({run, status: 'running'})])
    expect(waited.content[0].text).toMatch(/timed out/)
    expect(progress.length).toBeGreaterThanOrEqual(1)
    // A cancelled wait stops waiting: it must not collect the Run's end, which the next wait reports.
    const cancel = new AbortController()
    const cancelled = client.callTool({name: 'wait', arguments: {timeout: '60s'}}, {signal: cancel.signal})
    setTimeout(() => cancel.abort(), 300)
    await expect(cancelled).rejects.toThrow()
    const stopped = await call(client, 'control', {run, action: 'stop'})
    expect(stopped.isError).toBeFalsy()
    expect(stopped.structuredContent).toMatchObject({run, action: 'stop'})
    const row = await call(client, 'wait', {runs: [run], timeout: '60s'})
    expect(row.structuredContent.rows[0]).toMatchObject({run, status: 'cancelled'})
    // control on a finished Run: the CLI's error (exit 3) as a tool error.
    const late = await call(client, 'control', {run, action: 'pause'})
    expect(late.isError).toBe(true)
    expect(late.structuredContent.error.exit_code).toBe(3)
  })

  it('wait for 20,000 unknown ids answers within 64 KiB, naming the first ids and counting the rest', async () => {
    const {home} = newHome()
    const {client} = await connect(home)
    const ids = Array.from({length: 20_000}, (_, i) => `x${i}`)
    // call() checks the cap.
    const result = await call(client, 'wait', {runs: ids, timeout: '1s'})
    expect(result.isError).toBe(true)
    expect(result.content[0].text).toMatch(/^no Run x0, x1, .*, x19 \(and 19980 more\) of owner /)
    expect(result.structuredContent.unknown).toEqual(ids.slice(0, 100))
    expect(result.structuredContent.cut).toMatchObject({unknown_total: 20_000, unknown_shown: 100})
  })

  it('pages logs by byte offset and reassembles the exact bytes of a 200 KB log', async () => {
    const {home} = newHome()
    const {client} = await connect(home, ['--allow-adhoc'])
    // Multi-byte characters, quotes and control characters (6 bytes each once JSON-escaped) across page boundaries.
    const script =
      "const parts=[];let n=0;for(let i=0;n<200000;i++){const l=`line ${i} é😀\"\\\\\\u0001\\t`+'x'.repeat(i%50)+'\\n';parts.push(l);n+=Buffer.byteLength(l)}process.stdout.write(parts.join(''))"
    const launched = await call(client, 'run', {command: [process.execPath, '-e', script]})
    const run = launched.structuredContent.run
    await call(client, 'wait', {runs: [run], timeout: '60s'})
    const file = readFileSync(join(launched.structuredContent.state_dir, 'stdout.log'))
    expect(file.length).toBeGreaterThan(200_000)
    const pages: Buffer[] = []
    let offset = 0
    for (let i = 0; i < 50; i++) {
      const page = await call(client, 'logs', {run, offset, limit_bytes: CAP})
      const doc = page.structuredContent
      expect(doc.offset, JSON.stringify(page).slice(0, 400)).toBe(offset)
      // The text carries the same page under its header.
      expect(page.content[0].text).toBe(
        `stdout bytes ${doc.offset}-${doc.next_offset} of ${doc.size}${doc.eof ? ' (eof)' : `; continue at offset ${doc.next_offset}`}\n${doc.text}`,
      )
      expect(Buffer.byteLength(doc.text)).toBe(doc.next_offset - doc.offset)
      pages.push(Buffer.from(doc.text))
      offset = doc.next_offset
      if (doc.eof) break
    }
    expect(pages.length).toBeGreaterThan(3)
    expect(Buffer.concat(pages).equals(file)).toBe(true)
    // A small limit and stderr work too.
    const small = await call(client, 'logs', {run, offset: 0, limit_bytes: 10})
    expect(small.structuredContent).toMatchObject({text: 'line 0 é', next_offset: 9, eof: false})
    const stderr = await call(client, 'logs', {run, stream: 'stderr'})
    expect(stderr.structuredContent).toMatchObject({stream: 'stderr', text: '', eof: true})
  })

  it('keeps inspect, the tree and wait under 64 KiB over 300 Runs, saying what was cut', async () => {
    const {home} = newHome()
    const seeded = JSON.parse(
      actors(home, ['run', '--json', '--wait', '--', process.execPath, '-e', "process.stdout.write('y'.repeat(5000))"])
        .stdout,
    ).rows[0]
    const meta = readJson(join(seeded.state_dir, 'run.json'))
    const result = readJson(join(seeded.state_dir, 'result.json'))
    for (let i = 0; i < 300; i++) {
      const id = `seed-${String(i).padStart(3, '0')}`
      const dir = join(home, 'runs', id)
      cpSync(seeded.state_dir, dir, {recursive: true})
      const instance = randomUUID()
      writeFileSync(
        join(dir, 'run.json'),
        JSON.stringify({...meta, run: id, root: id, run_instance_id: instance, state_dir: dir}),
      )
      writeFileSync(
        join(dir, 'result.json'),
        JSON.stringify({
          ...result,
          run_instance_id: instance,
          completed_at: new Date(Date.now() - 1000 + i).toISOString(),
        }),
      )
    }
    // The Runs were started in a shell (owner default): this server collects them as that owner.
    const {client} = await connect(home, ['--owner', 'default'])
    const listing = await call(client, 'inspect')
    expect(listing.structuredContent.cut).toMatchObject({runs_total: 301, hint: expect.any(String)})
    expect(listing.structuredContent.runs.length).toBeGreaterThan(20)
    expect(listing.content[0].text).toMatch(/cut to fit 64 KiB/)
    const limited = await call(client, 'inspect', {limit: 5})
    expect(limited.structuredContent.runs).toHaveLength(5)
    expect(limited.structuredContent.cut).toBeUndefined()
    const tree = await call(client, 'inspect', {tree: true})
    expect(tree.structuredContent.forest.length).toBeGreaterThan(20)
    expect(tree.content[0].text).toMatch(/tree\(s\), 301 Run\(s\)/)
    const batch = await call(client, 'wait', {timeout: '30s'})
    expect(batch.structuredContent.members).toBe(256)
    expect(batch.structuredContent.cut).toMatchObject({hint: expect.stringMatching(/logs/)})
    expect(batch.structuredContent.rows.length + batch.structuredContent.overflow).toBe(256)
    const rest = await call(client, 'wait', {timeout: '30s'})
    // 300 copies; the seed itself was reported by its own `run --wait`.
    expect(rest.structuredContent.members).toBe(44)
  })

  it('inspect {run} of a Run with a 400 KB argv leaves out the big fields, not the id, status and times', async () => {
    const {home} = newHome()
    const words = Array.from({length: 4000}, (_, i) => `w${i}`.padEnd(100, 'x'))
    const launched = actors(home, ['run', '--name', 'huge', '--wait', '--', 'true', ...words])
    expect(launched.code, launched.stderr).toBe(0)
    const {client} = await connect(home, ['--owner', 'default'])
    const detail = (await call(client, 'inspect', {run: 'huge'})).structuredContent
    const meta = readJson(join(home, 'runs', 'huge', 'run.json'))
    expect(detail).toMatchObject({
      run: 'huge',
      status: 'done',
      exit_code: 0,
      run_instance_id: meta.run_instance_id,
      started_at: expect.any(String),
      ended_at: expect.any(String),
      meta: {run: 'huge', status: 'done', run_instance_id: meta.run_instance_id},
      result: {status: 'done', exit_code: 0},
    })
    expect(detail.cut.omitted).toEqual(expect.arrayContaining(['meta.argv']))
    expect(detail.meta.argv).toBeUndefined()
    expect(detail.cut.hint).toMatch(/run\.json/)
    // The resource of the Run is bounded the same way.
    const read = await client.readResource({uri: 'actors://runs/huge'})
    const text = (read.contents[0] as {text: string}).text
    expect(Buffer.byteLength(text)).toBeLessThanOrEqual(CAP)
    expect(JSON.parse(text)).toMatchObject({run: 'huge', status: 'done', cut: {omitted: expect.any(Array)}})
  })

  it('sends a resource update when a subscribed Run ends, driven by the doorbell', async () => {
    const {home} = newHome()
    const {client} = await connect(home)
    const gate = join(home, 'gate-open')
    const launched = await call(client, 'run', {recipe: 'gate', values: {file: gate}})
    const uri = `actors://runs/${launched.structuredContent.run}`
    // Fully started (the supervisor has recorded its command), so the next change of run.json is the end.
    await waitFor(() => readJson(join(launched.structuredContent.state_dir, 'run.json')).child_pid, 15_000, 'child_pid')
    const updates: string[] = []
    client.setNotificationHandler('notifications/resources/updated', (n) => {
      updates.push(n.params.uri)
    })
    const listed = await client.listResources()
    expect(listed.resources.map((r) => r.uri)).toEqual(expect.arrayContaining(['actors://runs', uri]))
    await client.subscribeResource({uri})
    await client.subscribeResource({uri: 'actors://runs'})
    writeFileSync(gate, '')
    await waitFor(() => updates.includes(uri) && updates.includes('actors://runs'), 30_000, 'resource updates')
    // The update came because the Run ended: a read now shows it terminal (the inspect document).
    const read = await client.readResource({uri})
    const detail = JSON.parse((read.contents[0] as {text: string}).text)
    expect(detail).toMatchObject({run: launched.structuredContent.run, status: 'done'})
    expect(detail).toEqual(JSON.parse(actors(home, ['inspect', launched.structuredContent.run, '--json']).stdout))
    await client.unsubscribeResource({uri})
    await expect(client.subscribeResource({uri: 'actors://runs/no-such-run'})).rejects.toThrow(/not found/)
  })

  it("the resource of a parent Run shows its children's lives (runtime.child_started / child_ended)", async () => {
    const {home} = newHome()
    expect(
      actors(home, [
        'run',
        '--name',
        'par',
        '--',
        'sh',
        '-c',
        'actors run --name kid -- true >/dev/null; actors wait kid >/dev/null',
      ]).code,
    ).toBe(0)
    await waitFor(() => readJson(join(home, 'runs', 'par', 'run.json')).status === 'done', 15_000, 'par done')
    const {client} = await connect(home)
    const read = await client.readResource({uri: 'actors://runs/par'})
    const detail = JSON.parse((read.contents[0] as {text: string}).text)
    const kinds = detail.trace.map((e: {kind: string; data?: {run?: string}}) => `${e.kind}:${e.data?.run ?? ''}`)
    expect(kinds).toEqual(expect.arrayContaining(['runtime.child_started:kid', 'runtime.child_ended:kid']))
  })

  it('exits when stdin closes; its Runs keep going and a later session waits for them', async () => {
    const {home} = newHome()
    const first = await connect(home)
    const gate = join(home, 'gate-open')
    const launched = await call(first.client, 'run', {recipe: 'gate', values: {file: gate}})
    const run = launched.structuredContent.run
    const pid = first.transport.pid!
    const closedAt = Date.now()
    await first.client.close()
    await waitFor(() => !processAlive(pid), 15_000, 'the server to exit')
    const exitMs = Date.now() - closedAt
    expect(exitMs).toBeLessThan(10_000)
    expect(readJson(join(launched.structuredContent.state_dir, 'run.json')).status).toBe('running')
    const second = await connect(home)
    const pending = await call(second.client, 'wait', {timeout: '0'})
    expect(pending.structuredContent.pending.map((p: any) => p.run)).toEqual([run])
    writeFileSync(gate, '')
    const row = await call(second.client, 'wait', {timeout: '60s'})
    expect(row.structuredContent.rows[0]).toMatchObject({run, status: 'done', output: 'opened\n'})
  })

  it('writes nothing but JSON-RPC to stdout, even when a Run writes output', async () => {
    const {home} = newHome()
    const child = spawn(process.execPath, [BIN, 'mcp', '--allow-adhoc'], {
      env: cliEnv(home),
      stdio: ['pipe', 'pipe', 'pipe'],
    })
    let stdout = ''
    child.stdout.on('data', (chunk) => (stdout += chunk))
    const send = (message: object) => child.stdin.write(JSON.stringify({jsonrpc: '2.0', ...message}) + '\n')
    send({
      id: 1,
      method: 'initialize',
      params: {protocolVersion: '2025-11-25', capabilities: {}, clientInfo: {name: 'raw', version: '1'}},
    })
    await waitFor(() => stdout.includes('"id":1'), 30_000, 'initialize')
    send({method: 'notifications/initialized'})
    send({
      id: 2,
      method: 'tools/call',
      params: {name: 'run', arguments: {command: ['sh', '-c', 'echo to-stdout; echo to-stderr >&2; cat']}},
    })
    await waitFor(() => stdout.includes('"id":2'), 30_000, 'run')
    send({id: 3, method: 'tools/call', params: {name: 'wait', arguments: {timeout: '60s'}}})
    await waitFor(() => stdout.includes('"id":3'), 60_000, 'wait')
    child.stdin.end()
    const code = await new Promise((resolve) => child.on('exit', resolve))
    expect(code).toBe(0)
    const lines = stdout.split('\n').filter(Boolean)
    for (const line of lines) expect(JSON.parse(line)).toMatchObject({jsonrpc: '2.0'})
    expect(stdout).not.toMatch(/^to-std/m)
    // The Run's stdin was not the server's: `cat` ended at once on its own empty stdin.
    const row = JSON.parse(lines.find((l) => l.includes('"id":3'))!).result.structuredContent.rows[0]
    expect(row).toMatchObject({status: 'done', output: 'to-stdout\n'})
  })

  it('lock: a named holder with a lease acquires, shows in status, makes a second holder busy (5) or time out (124), and releases', async () => {
    const {home} = newHome()
    const {client} = await connect(home)
    const anonymous = await call(client, 'lock', {op: 'acquire', name: 'repo'})
    expect(anonymous.isError).toBe(true)
    expect(anonymous.content[0].text).toMatch(/needs a holder: this server process is not a durable holder/)
    expect(anonymous.structuredContent.error.exit_code).toBe(2)
    const noLease = await call(client, 'lock', {op: 'acquire', name: 'repo', holder: 'agent-a'})
    expect(noLease.isError).toBe(true)
    expect(noLease.content[0].text).toMatch(/needs a lease/)

    const taken = await call(client, 'lock', {op: 'acquire', name: 'repo', holder: 'agent-a', lease: '10m'})
    expect(taken.isError).toBeFalsy()
    expect(taken.structuredContent).toMatchObject({lock: 'repo', holder: 'agent-a', held: 1, slots: 1, already: false})
    expect(taken.structuredContent.lease_expires_at).toEqual(expect.any(String))
    expect(taken.content[0].text).toMatch(/^agent-a holds lock repo \(1\/1, lease until /)

    const status = await call(client, 'lock', {op: 'status', name: 'repo'})
    expect(status.structuredContent.holders.map((h: any) => h.holder)).toEqual(['agent-a'])
    expect(status.structuredContent).toEqual(JSON.parse(actors(home, ['lock', 'status', 'repo', '--json']).stdout))
    const all = await call(client, 'lock', {op: 'status'})
    expect(all.structuredContent.locks.map((l: any) => l.lock)).toEqual(['repo'])

    const busy = await call(client, 'lock', {op: 'acquire', name: 'repo', holder: 'agent-b', lease: '10m'})
    expect(busy.isError).toBe(true)
    expect(busy.structuredContent.error).toMatchObject({exit_code: 5, lock: 'repo', held: 1})
    expect(busy.content[0].text).toMatch(/lock repo is busy \(1\/1 held by agent-a\)/)
    const timedOut = await call(client, 'lock', {
      op: 'acquire',
      name: 'repo',
      holder: 'agent-b',
      lease: '10m',
      wait: '300ms',
    })
    expect(timedOut.isError).toBe(true)
    expect(timedOut.structuredContent.error.exit_code).toBe(124)
    expect(timedOut.content[0].text).toMatch(/not free within 300 ms/)

    const renewed = await call(client, 'lock', {op: 'renew', name: 'repo', holder: 'agent-a', lease: '20m'})
    expect(Date.parse(renewed.structuredContent.lease_expires_at)).toBeGreaterThan(
      Date.parse(taken.structuredContent.lease_expires_at),
    )
    const notMine = await call(client, 'lock', {op: 'release', name: 'repo', holder: 'agent-b'})
    expect(notMine.structuredContent.error.exit_code).toBe(3)
    const released = await call(client, 'lock', {op: 'release', name: 'repo', holder: 'agent-a'})
    expect(released.structuredContent).toMatchObject({lock: 'repo', holder: 'agent-a', held: 0, released: true})
    const next = await call(client, 'lock', {op: 'acquire', name: 'repo', holder: 'agent-b', lease: '1m'})
    expect(next.structuredContent).toMatchObject({holder: 'agent-b', held: 1})
  })

  it('send resumes a finished Run as its next generation, rerun replaces a value; both obey the launch policy', async () => {
    const {home} = newHome()
    const {client} = await connect(home, ['--allow', 'hello'])
    const launched = await call(client, 'run', {recipe: 'hello', values: {name: 'Ada'}})
    const run = launched.structuredContent.run
    await call(client, 'wait', {runs: [run]})

    const sent = await call(client, 'send', {run, message: 'once more'})
    expect(sent.isError).toBeFalsy()
    expect(sent.structuredContent).toMatchObject({run, generation: 2, delivered: 'resumed'})
    expect(sent.content[0].text).toMatch(/resumed as generation 2/)
    const second = await call(client, 'wait', {runs: [run]})
    expect(second.structuredContent.rows).toEqual([
      expect.objectContaining({run, generation: 2, status: 'done', output: 'hello, Ada\n'}),
    ])

    const rerun = await call(client, 'rerun', {run, values: {name: 'Bob'}})
    expect(rerun.isError).toBeFalsy()
    expect(rerun.structuredContent).toMatchObject({run, generation: 3})
    const third = await call(client, 'wait', {runs: [run]})
    expect(third.structuredContent.rows).toEqual([
      expect.objectContaining({run, generation: 3, output: 'hello, Bob\n'}),
    ])

    // A server that may not launch hello may not restart its Runs either: a tool error naming the rule, nothing started.
    const {client: narrow} = await connect(home, ['--allow', 'gate'])
    const refused = await call(narrow, 'rerun', {run})
    expect(refused.isError).toBe(true)
    expect(refused.content[0].text).toMatch(/refused by policy --allow gate/)
    const resend = await call(narrow, 'send', {run, message: 'again'})
    expect(resend.isError).toBe(true)
    expect(readJson(join(home, 'runs', run, 'run.json')).generation).toBe(3)
  })

  it('close stops a live Run and retires its id, under the launch policy; send after it is refused (exit 5)', async () => {
    const {home} = newHome()
    const {client} = await connect(home, ['--allow', 'sleep'])
    const launched = await call(client, 'run', {recipe: 'sleep', values: {seconds: 30}})
    const run = launched.structuredContent.run
    const {client: narrow} = await connect(home, ['--allow', 'hello'])
    const refused = await call(narrow, 'close', {run})
    expect(refused.isError).toBe(true)
    expect(refused.content[0].text).toMatch(/refused by policy --allow hello/)
    expect(readJson(join(home, 'runs', run, 'run.json')).closed).toBeUndefined()

    const closed = await call(client, 'close', {run})
    expect(closed.isError, closed.content[0]?.text).toBeFalsy()
    expect(closed.structuredContent).toMatchObject({
      run,
      closed: true,
      stopped: true,
      status: 'cancelled',
      already_closed: false,
    })
    const again = await call(client, 'close', {run})
    expect(again.structuredContent).toMatchObject({closed_at: closed.structuredContent.closed_at, already_closed: true})
    const sent = await call(client, 'send', {run, message: 'more'})
    expect(sent.isError).toBe(true)
    expect(sent.structuredContent.error.exit_code).toBe(5)
    expect(sent.content[0].text).toMatch(/is closed; start a new Run/)
  })
})
