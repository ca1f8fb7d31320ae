/**
 * `actors mcp`'s policy holds down the tree (SPEC: Agents over MCP; issue 35
 * Deliver 5): a Run the server starts records the policy in its run.json, and
 * every launch inside its tree (a child, a grandchild; by Recipe name, by
 * Recipe file path, ad-hoc) is checked against the ancestors' records, exit 5
 * naming the policy and where it came from. No template value becomes an
 * option of the command it is placed into: the docs' example policy can no
 * longer be stepped around through `fanout`. And the server's JSON-RPC errors
 * carry the CLI's error shape.
 */
import {existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'
import {setTimeout as sleep} from 'node:timers/promises'
import {actors, homeWithRecipes, readJson, removeHome, waitFor, waitForResult} from './helpers.js'
import {initialized, killRawServers, toolCall} from './mcp-raw.js'

const DOCS_POLICY = ['--allow', 'hello,demo,sleep,fanout,checksum']

let dirs: string[] = []
afterEach(() => {
  killRawServers()
  for (const dir of dirs) removeHome(dir)
  dirs = []
})

function newHome(files: Record<string, string> = {}): {home: string; recipes: string} {
  const made = homeWithRecipes(files)
  dirs.push(made.home)
  return made
}

const runIds = (home: string) =>
  existsSync(join(home, 'runs')) ? readdirSync(join(home, 'runs')).filter((d) => !d.startsWith('.')) : []

/** A command that, if it ever runs, leaves `marker` behind. */
const touching = (marker: string) => ['--', 'sh', '-c', `touch '${marker}'`]

describe('actors mcp: template values never become options', () => {
  it("the docs' bypass (fanout with recipe --silent and an ad-hoc argv in values) is refused, exit 2, and CMD never runs", async () => {
    const {home} = newHome()
    const marker = join(home, 'cmd-ran')
    const session = await initialized(home, DOCS_POLICY)
    session.send(
      toolCall(2, 'run', {recipe: 'fanout', values: {recipe: '--silent', count: 1, values: touching(marker)}}),
    )
    const r = await session.reply(2, 60_000)
    expect(r.result.isError).toBe(true)
    expect(r.result.structuredContent.error).toMatchObject({exit_code: 2})
    expect(r.result.structuredContent.error.message).toContain('arg "recipe" has the value "--silent"')
    await sleep(1500)
    expect(existsSync(marker)).toBe(false)
    expect(runIds(home)).toEqual([])
  })

  it('the same values from the command line are refused with exit 2, naming the arg and the value', async () => {
    const {home} = newHome()
    const marker = join(home, 'cmd-ran')
    const values = `values=${JSON.stringify(touching(marker))}`
    const r = actors(home, ['run', 'fanout', 'recipe=--silent', 'count=1', values, '--wait'], {timeout: 60_000})
    expect(r.code, r.stderr).toBe(2)
    expect(r.stderr).toContain('fanout.yaml')
    expect(r.stderr).toContain('arg "recipe" has the value "--silent"')
    // An item of the values array is its own argv word of the inner `actors run` too.
    const item = actors(home, ['run', 'fanout', 'recipe=hello', 'count=1', values])
    expect(item.code, item.stderr).toBe(2)
    expect(item.stderr).toContain('arg "values" has the value "--"')
    await sleep(1000)
    expect(existsSync(marker)).toBe(false)
    expect(runIds(home)).toEqual([])
  })
})

/** What a Run tried inside its tree: the exit code and stderr of each `actors run` (files in its state dir). */
const tried = (dir: string, name: string) => ({
  code: Number(readFileSync(join(dir, `${name}.rc`), 'utf8').trim()),
  stderr: readFileSync(join(dir, `${name}.err`), 'utf8'),
})

/** `actors run ARGS`, with its exit code and stderr kept as NAME.rc and NAME.err in the Run's state dir. */
const attempt = (name: string, args: string) =>
  `actors run ${args} >/dev/null 2>"$d/${name}.err"; echo $? >"$d/${name}.rc"`

const PROBE = [
  'description: tries launches inside its own tree',
  'args: ["copy:path"]',
  'template:',
  '  - sh',
  '  - -c',
  '  - |',
  '    d=$0',
  `    ${attempt('leaf', 'leaf --name leaf1')}`,
  `    ${attempt('sleep', 'sleep seconds=0')}`,
  `    ${attempt('adhoc', '-- touch "$d/adhoc-ran"')}`,
  `    ${attempt('path', '"$1"')}`,
  `    ${attempt('shadow', '--recipes "$(dirname "$1")" leaf')}`,
  `    ${attempt('nest', 'nest --name nest1 --wait')}`,
  // With the lineage variables cleared the launch is still this Run's (known from its unit), and so still held.
  `    ${attempt('envless', 'sleep seconds=0').replace('actors run', 'env -u ACTORS_RUN -u ACTORS_RUN_INSTANCE -u ACTORS_STATE_DIR -u ACTORS_ROOT -u ACTORS_DEPTH actors run')}`,
  '  - "{state_dir}"',
  '  - "{copy}"',
].join('\n')
const NEST = [
  'template:',
  '  - sh',
  '  - -c',
  `  - 'd=$0; ${attempt('sleep', 'sleep seconds=0')}; ${attempt('adhoc', '-- true')}'`,
  '  - "{state_dir}"',
].join('\n')
const LEAF = 'template: [echo, leaf]\n'

describe('actors mcp: the policy holds down the tree', () => {
  it("a Run started through mcp records the policy; launches in its tree outside it are refused (exit 5), children's records carry it", async () => {
    const {home, recipes} = newHome({'probe.yaml': PROBE, 'nest.yaml': NEST, 'leaf.yaml': LEAF})
    // A Recipe file outside the server's roots, under an allowed name, that would leave a mark.
    const elsewhere = join(home, 'elsewhere')
    mkdirSync(elsewhere)
    writeFileSync(join(elsewhere, 'leaf.yaml'), `template: [touch, "${join(home, 'elsewhere-ran')}"]\n`)
    const session = await initialized(home, ['--allow', 'probe,leaf,nest', '--owner', 'agent'])
    session.send(toolCall(2, 'run', {recipe: 'probe', name: 'probe', values: {copy: join(elsewhere, 'leaf.yaml')}}))
    const r = await session.reply(2, 60_000)
    expect(r.result.isError, JSON.stringify(r.result)).toBeUndefined()
    const probeDir = join(home, 'runs', 'probe')
    const result = await waitForResult(probeDir, 90_000)
    expect(result.status).toBe('done')

    const rule = {
      origin: 'actors mcp --allow probe,leaf,nest --owner agent',
      allow: ['probe', 'leaf', 'nest'],
      allow_adhoc: false,
      owner: 'agent',
      run: 'probe',
    }
    expect(readJson(join(probeDir, 'run.json')).policy).toEqual([
      {...rule, recipe_roots: expect.arrayContaining([recipes])},
    ])

    // An allowed Recipe launches, and its record carries the same policy (entered with probe).
    expect(tried(probeDir, 'leaf').code).toBe(0)
    expect(readJson(join(home, 'runs', 'leaf1', 'run.json')).policy).toEqual([expect.objectContaining(rule)])

    const refusals = {
      sleep: 'Recipe "sleep" matches none of --allow probe,leaf,nest',
      envless: 'Recipe "sleep" matches none of --allow probe,leaf,nest',
      adhoc: 'ad-hoc commands are not allowed',
      path: `Recipe file ${join(elsewhere, 'leaf.yaml')} is not the Recipe "leaf"`,
      shadow: `Recipe file ${join(elsewhere, 'leaf.yaml')} is not the Recipe "leaf"`,
    }
    for (const [name, reason] of Object.entries(refusals)) {
      const {code, stderr} = tried(probeDir, name)
      expect(code, `${name}: ${stderr}`).toBe(5)
      expect(stderr).toContain(
        'refused by the launch policy of Run probe (actors mcp --allow probe,leaf,nest --owner agent)',
      )
      expect(stderr).toContain(reason)
    }
    expect(existsSync(join(probeDir, 'adhoc-ran'))).toBe(false)
    expect(existsSync(join(home, 'elsewhere-ran'))).toBe(false)

    // A grandchild is held to it as well: nest (allowed) may not launch sleep or an ad-hoc command.
    expect(tried(probeDir, 'nest').code).toBe(0)
    const nestDir = join(home, 'runs', 'nest1')
    for (const name of ['sleep', 'adhoc']) {
      const {code, stderr} = tried(nestDir, name)
      expect(code, `nest ${name}: ${stderr}`).toBe(5)
      expect(stderr).toContain('refused by the launch policy of Run probe')
    }
    expect(runIds(home).sort()).toEqual(['leaf1', 'nest1', 'probe'])
  })

  it("a next generation keeps its record's policy (actors rerun from outside the tree)", async () => {
    const {home} = newHome({'leaf.yaml': LEAF})
    const session = await initialized(home, ['--allow', 'leaf', '--owner', 'agent'])
    session.send(toolCall(2, 'run', {recipe: 'leaf', name: 'solo'}))
    expect((await session.reply(2, 60_000)).result.isError).toBeUndefined()
    const dir = join(home, 'runs', 'solo')
    await waitForResult(dir, 60_000)
    const policy = readJson(join(dir, 'run.json')).policy
    expect(policy).toEqual([expect.objectContaining({allow: ['leaf'], run: 'solo'})])
    const again = actors(home, ['rerun', 'solo'], {env: {ACTORS_OWNER: 'agent'}})
    expect(again.code, again.stderr).toBe(0)
    await waitFor(() => readJson(join(dir, 'run.json')).generation === 2, 30_000, 'generation 2 of solo')
    expect(readJson(join(dir, 'run.json')).policy).toEqual(policy)
  })

  it.each([
    ['its command rewritten', {}],
    ['its command rewritten and its Recipe file dropped', {recipe_file: undefined}],
  ])("rerun never runs a Run's own rewrite of its run.json (%s): the Recipe is resolved again", async (_, more) => {
    const {home} = newHome({'leaf.yaml': LEAF})
    const marker = join(home, 'forged-ran')
    const session = await initialized(home, ['--allow', 'leaf', '--owner', 'agent'])
    session.send(toolCall(2, 'run', {recipe: 'leaf', name: 'liar'}))
    expect((await session.reply(2, 60_000)).result.isError).toBeUndefined()
    const dir = join(home, 'runs', 'liar')
    await waitForResult(dir, 60_000)
    // What any Run can do to its own record before it ends.
    const forged = ['sh', '-c', `touch '${marker}'`]
    const meta = readJson(join(dir, 'run.json'))
    writeFileSync(
      join(dir, 'run.json'),
      JSON.stringify({...meta, argv: forged, plan: {mode: 'single', steps: [forged]}, ...more}),
    )
    session.send(toolCall(3, 'rerun', {run: 'liar'}))
    const r = await session.reply(3, 60_000)
    if (!r.result.isError) {
      await waitFor(() => readJson(join(dir, 'run.json')).generation === 2, 30_000, 'generation 2 of liar')
      await waitForResult(dir, 60_000)
      expect(readJson(join(dir, 'run.json')).argv).toEqual(['echo', 'leaf'])
      expect(readFileSync(join(dir, 'stdout.log'), 'utf8')).toBe('leaf\n')
    } else {
      expect(r.result.structuredContent.error.exit_code).toBe(5)
    }
    await sleep(500)
    expect(existsSync(marker)).toBe(false)
  })

  it('a generation the server starts (rerun) of a Run started elsewhere records the policy from then on', async () => {
    const {home} = newHome({'leaf.yaml': LEAF})
    const first = actors(home, ['run', 'leaf', '--name', 'cli', '--wait'], {env: {ACTORS_OWNER: 'agent'}})
    expect(first.code, first.stderr).toBe(0)
    const dir = join(home, 'runs', 'cli')
    expect(readJson(join(dir, 'run.json')).policy).toBeUndefined()
    const session = await initialized(home, ['--allow', 'leaf', '--owner', 'agent'])
    session.send(toolCall(2, 'rerun', {run: 'cli'}))
    const r = await session.reply(2, 60_000)
    expect(r.result.isError, JSON.stringify(r.result)).toBeUndefined()
    const meta = readJson(join(dir, 'run.json'))
    expect(meta.generation).toBe(2)
    expect(meta.policy).toEqual([
      expect.objectContaining({origin: 'actors mcp --allow leaf --owner agent', run: 'cli'}),
    ])
  })

  it('fanout of a Recipe given by path (outside the allow-list) fails: its child is refused by the policy and never runs', async () => {
    const {home} = newHome()
    const evil = join(home, 'evil.yaml')
    writeFileSync(evil, `template: [touch, "${join(home, 'evil-ran')}"]\n`)
    const session = await initialized(home, DOCS_POLICY)
    session.send(toolCall(2, 'run', {recipe: 'fanout', name: 'fan', values: {recipe: evil, count: 1}}))
    const r = await session.reply(2, 60_000)
    expect(r.result.isError, JSON.stringify(r.result)).toBeUndefined()
    const result = await waitForResult(join(home, 'runs', 'fan'), 90_000)
    expect(result.status).toBe('failed')
    expect(readFileSync(join(home, 'runs', 'fan', 'stderr.log'), 'utf8')).toContain(
      'refused by the launch policy of Run fan (actors mcp --allow hello,demo,sleep,fanout,checksum',
    )
    expect(existsSync(join(home, 'evil-ran'))).toBe(false)
    expect(runIds(home)).toEqual(['fan'])
  })
})

describe('actors mcp: JSON-RPC errors carry {error: {message, exit_code, fix}}', () => {
  const rpc = (id: number, method: string, params?: unknown) =>
    JSON.stringify({jsonrpc: '2.0', id, method, ...(params ? {params} : {})})

  it('an unknown method, a missing Run, an invalid Run id (dot segments, encoded or not, included) and an unknown URI', async () => {
    const {home} = newHome()
    const session = await initialized(home)
    session.send(rpc(2, 'nope/nothing'))
    session.send(rpc(3, 'resources/read', {uri: 'actors://runs/nosuch'}))
    session.send(rpc(4, 'resources/read', {uri: 'actors://runs/a%20b'}))
    session.send(rpc(5, 'resources/subscribe', {uri: 'actors://runs/nosuch'}))
    session.send(rpc(6, 'resources/subscribe', {uri: 'actors://runs/..%2Fx'}))
    session.send(rpc(7, 'resources/read', {uri: 'actors://elsewhere'}))
    session.send(rpc(8, 'resources/read', {uri: 'actors://runs/%E0'}))
    // The SDK's URL parser resolves percent-encoded dot segments: these read as the table and as Run nosuch.
    session.send(rpc(9, 'resources/read', {uri: 'actors://runs/%2e%2e'}))
    session.send(rpc(10, 'resources/read', {uri: 'actors://runs/.'}))
    session.send(rpc(11, 'resources/read', {uri: 'actors://runs/x/%2E%2E/nosuch'}))
    // A uri that is no string: invalid params, not an internal error with the schema's issue dump.
    session.send(rpc(12, 'resources/read', {uri: {a: 1}}))
    session.send(rpc(13, 'resources/subscribe', {uri: 7}))
    const expected: Array<[number, number, number, string]> = [
      [2, -32601, 2, 'Method not found'],
      [3, -32602, 4, 'Run nosuch not found'],
      [4, -32602, 2, 'Run id "a b" is not valid'],
      [5, -32602, 4, 'Run nosuch not found'],
      [6, -32602, 2, 'Run id "../x" is not valid'],
      [7, -32602, 4, 'actors://elsewhere'],
      [8, -32602, 2, 'not valid percent-encoding'],
      [9, -32602, 2, 'Run id ".." is not valid'],
      [10, -32602, 2, 'Run id "." is not valid'],
      [11, -32602, 2, 'Run id "x/../nosuch" is not valid'],
      [12, -32602, 2, 'params.uri must be a string, not object'],
      [13, -32602, 2, 'params.uri must be a string, not number'],
    ]
    for (const [id, code, exitCode, message] of expected) {
      const reply = await session.reply(id)
      expect(reply.error.code, JSON.stringify(reply)).toBe(code)
      expect(reply.error.data.error).toEqual({
        message: reply.error.message,
        exit_code: exitCode,
        fix: expect.any(String),
      })
      expect(reply.error.message).toContain(message)
    }
    await waitFor(() => session.exited() === undefined, 1000, 'the server still up')
  })
})
