/**
 * Text from a Run is inert on a terminal, end to end through bin/actors:
 * an attention summary carrying OSC 52, ESC[2J and U+202E in `wait`,
 * `inspect RUN` and `run --wait`; a Recipe's description and arg default in
 * `actors recipes` (a cloned repository's ./recipes); an error that echoes
 * an arg name with ESC in it; a service's reply to a declared action; a
 * playback status's track name in `control DIR status`, and a track named
 * so in `music serve`'s own lines (real mpv). The human output
 * shows each escaped; `--json` keeps the bytes exact.
 */
import {spawn} from 'node:child_process'
import {createServer, type Server} from 'node:net'
import {existsSync, mkdirSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'
import {
  BIN,
  ROOT,
  actors,
  actorsAsync,
  cliEnv,
  homesPerTest,
  readJson,
  waitFor,
  waitForResult,
  writeTone,
} from './helpers.js'
import {ACTIVE, HOSTILE, HOSTILE_SHOWN} from './inert-support.js'

const home = homesPerTest('actors-inert-')

/** Both streams of a human run: the escaped form is there, nothing a terminal acts on is. */
function expectInert(r: {stdout: string; stderr: string}, where: 'stdout' | 'stderr' = 'stdout'): void {
  expect(r.stdout + r.stderr).not.toMatch(ACTIVE)
  expect(r[where]).toContain(HOSTILE_SHOWN)
}

describe('an attention summary', () => {
  // The Run asks for attention with the hostile summary, then stays live.
  const script = 'actors emit review.ready --attention followup --summary "$HOSTILE"; sleep 30'

  it('reaches wait, inspect and run --wait escaped; --json keeps it exact', async () => {
    const h = home()
    const r = actors(h, ['run', '--json', '--name', 'evil', '--', 'sh', '-c', script], {env: {HOSTILE}})
    expect(r.code, r.stderr).toBe(0)
    await waitFor(() => actors(h, ['inspect', 'evil', '--json']).json?.trace?.some((e: any) => e.summary === HOSTILE))
    const waited = actors(h, ['wait', 'evil'])
    expect(waited.code, waited.stderr).toBe(0)
    expectInert(waited)
    expect(waited.stdout).toContain(`attention: evil followup review.ready: ${HOSTILE_SHOWN}`)
    const inspected = actors(h, ['inspect', 'evil'])
    expectInert(inspected)
    expect(inspected.stdout).toMatch(new RegExp(` review\\.ready {2}${HOSTILE_SHOWN.replace(/[\\[\]]/g, '\\$&')}\n`))
    const exact = actors(h, ['inspect', 'evil', '--json'])
    expect(exact.json.trace.map((e: any) => e.summary)).toContain(HOSTILE)

    // run --wait blocks until the Run ends, attention shown on the way: a Run that ends soon after asking.
    const brief = 'actors emit review.ready --attention followup --summary "$HOSTILE"; sleep 1'
    const launched = actors(h, ['run', '--wait', '--name', 'evil2', '--', 'sh', '-c', brief], {env: {HOSTILE}})
    expect(launched.code, launched.stderr).toBe(0)
    expectInert(launched)
    expect(launched.stdout).toContain(`attention: evil2 followup review.ready: ${HOSTILE_SHOWN}`)
    const json = actors(h, ['run', '--wait', '--json', '--name', 'evil3', '--', 'sh', '-c', brief], {env: {HOSTILE}})
    expect(json.json.attention.map((a: any) => a.summary)).toEqual([HOSTILE])
    actors(h, ['control', 'evil', 'kill'])
  })
})

describe('the Run table', () => {
  it('shows a command word with ESC and U+202E escaped, measured as printed', () => {
    const h = home()
    const r = actors(h, ['run', '--json', '--name', 'cmd', '--', 'sleep', '30', `x${HOSTILE}`])
    expect(r.code, r.stderr).toBe(0)
    const table = actors(h, ['inspect'], {env: {COLUMNS: '400'}})
    // The command's own quoting writes C0 as \u001b; U+202E it leaves, and the table escapes it.
    expect(table.stdout + table.stderr).not.toMatch(ACTIVE)
    const [header, row] = table.stdout.split('\n')
    expect(row).toMatch(/ rlo\\u202e end" {2}- *$/)
    // The last column starts where its header does: the COMMAND column was measured escaped.
    expect(row!.lastIndexOf(' -')).toBe(header!.indexOf('PARENT') - 1)
    actors(h, ['control', 'cmd', 'kill'])
  })
})

describe('a Recipe from a cloned repository', () => {
  it('shows its description and arg default escaped in `recipes`; --json exact', () => {
    const h = home()
    const clone = join(h, 'clone')
    mkdirSync(join(clone, 'recipes'), {recursive: true})
    writeFileSync(
      join(clone, 'recipes', 'evil.yaml'),
      [
        `description: ${JSON.stringify(HOSTILE)}`,
        `args: [${JSON.stringify(`who:string=x${HOSTILE}`)}]`,
        'template: [echo, "{who}"]',
        '',
      ].join('\n'),
    )
    const listed = actors(h, ['recipes'], {cwd: clone, env: {COLUMNS: '400'}})
    expect(listed.code, listed.stderr).toBe(0)
    expectInert(listed)
    const row = listed.stdout.split('\n').find((line) => line.startsWith('evil '))
    expect(row).toContain(`who:string=x${HOSTILE_SHOWN}`)
    expect(row).toMatch(new RegExp(`  ${HOSTILE_SHOWN.replace(/[\\[\]]/g, '\\$&')}$`))
    // The table measured the escaped text: the DESCRIPTION header sits where the escaped descriptions start.
    const header = listed.stdout.split('\n')[0]!
    expect(row!.lastIndexOf(HOSTILE_SHOWN)).toBe(header.indexOf('DESCRIPTION'))
    const described = actors(h, ['recipes', 'evil'], {cwd: clone})
    expectInert(described)
    expect(described.stdout).toContain(`description  ${HOSTILE_SHOWN}\n`)
    const exact = actors(h, ['recipes', 'evil', '--json'], {cwd: clone})
    expect(exact.json.description).toBe(HOSTILE)
  })

  it('offers no completion candidate with ESC or U+202E in it (a shell draws and types candidates)', () => {
    const h = home()
    const clone = join(h, 'clone')
    mkdirSync(join(clone, 'recipes'), {recursive: true})
    for (const name of ['plain', 'n\u001b[2Jx', 'r\u202eo'])
      writeFileSync(join(clone, 'recipes', `${name}.yaml`), 'template: [echo]\n')
    const r = actors(h, ['__complete', '--current=', '--', 'run'], {cwd: clone})
    expect(r.code, r.stderr).toBe(0)
    expect(r.stdout.split('\n')).toContain('plain')
    expect(r.stdout).not.toMatch(ACTIVE)
    expect(r.stdout.split('\n').filter((line) => line.includes('2Jx') || line.startsWith('r\\'))).toEqual([])
  })

  it('an error echoing an arg name with ESC in it shows it escaped; --json exact', () => {
    const h = home()
    const clone = join(h, 'clone')
    mkdirSync(join(clone, 'recipes'), {recursive: true})
    writeFileSync(join(clone, 'recipes', 'echo.yaml'), 'args: ["who:string=x"]\ntemplate: [echo, "{who}"]\n')
    const bad = actors(h, ['run', 'echo', 'b\u001b[2Jad\u202e=1'], {cwd: clone})
    expect(bad.code).toBe(2)
    expect(bad.stderr + bad.stdout).not.toMatch(ACTIVE)
    expect(bad.stderr).toContain('arg "b\\e[2Jad\\u202e" is not declared by Recipe echo')
    const exact = actors(h, ['run', 'echo', 'b\u001b[2Jad\u202e=1', '--json'], {cwd: clone})
    expect(exact.code).toBe(2)
    expect(exact.json.error.message).toContain('arg "b\u001b[2Jad\u202e" is not declared')
  })
})

describe("a service's reply", () => {
  const serviceUrl = `file://${join(ROOT, 'dist', 'service.js')}`
  const service = `
import {serveControlEndpoint} from '${serviceUrl}'
const hostile = process.env.HOSTILE
await serveControlEndpoint({
  handle: async ({action}) =>
    action === 'now'
      ? {state: 'playing', index: 0, count: 1, track: hostile}
      : action === 'fail'
        ? {ok: false, error: hostile, exit_code: 2}
        : {said: hostile},
})
`

  it('to a declared action is printed escaped, as JSON or as a playback line; --json exact', async () => {
    const h = home()
    const recipes = join(h, 'recipes')
    mkdirSync(recipes)
    writeFileSync(join(recipes, 'service.mjs'), service)
    writeFileSync(
      join(recipes, 'svc.yaml'),
      "template: [node, '{recipe_dir}/service.mjs']\ncontrol: [say, now, fail]\n",
    )
    const r = actors(h, ['run', 'svc', '--name', 'svc', '--recipes', recipes, '--json'], {env: {HOSTILE}})
    expect(r.code, r.stderr).toBe(0)
    await waitFor(() => actors(h, ['control', 'svc', 'status', '--json']).json?.endpoint?.current, 15_000)
    const said = actors(h, ['control', 'svc', 'say'])
    expect(said.code, said.stderr).toBe(0)
    expect(said.stdout + said.stderr).not.toMatch(ACTIVE)
    // JSON.stringify already writes C0 as \u001b; C1 and bidi it leaves raw, and those are escaped too.
    expect(said.stdout).toContain('rlo\\u202e end')
    const now = actors(h, ['control', 'svc', 'now'])
    expectInert(now)
    expect(now.stdout).toBe(`playing 1/1  ${HOSTILE_SHOWN}\n`)
    expect(actors(h, ['control', 'svc', 'say', '--json']).json.reply.said).toBe(HOSTILE)
    // A refusal in the service's own words is an error message: escaped too.
    const failed = actors(h, ['control', 'svc', 'fail'])
    expect(failed.code).toBe(2)
    expectInert(failed, 'stderr')
    expect(actors(h, ['control', 'svc', 'fail', '--json']).json.error.message).toContain(HOSTILE)
    actors(h, ['control', 'svc', 'kill'])
    await waitForResult(r.json.state_dir)
  })
})

describe('a playback status', () => {
  const servers: Server[] = []
  afterEach(() => {
    for (const server of servers.splice(0)) server.close()
  })

  it("shows a track's name escaped in `control DIR status`; --json exact", async () => {
    const dir = home()
    const path = join(dir, 'playback.sock')
    const reply = {ok: true, state: 'playing', index: 0, count: 1, track: `/music/${HOSTILE}.flac`, volume: 50}
    const server = createServer((socket) => {
      socket.once('data', () => socket.end(`${JSON.stringify(reply)}\n`))
      socket.on('error', () => {})
    })
    servers.push(server)
    await new Promise<void>((resolve) => server.listen(path, resolve))
    const endpoint = {owner_mode: 'standalone', path, service_instance_id: 'x', service_pid: process.pid}
    writeFileSync(
      join(dir, 'playback-endpoint.json'),
      JSON.stringify({...endpoint, ready_at: new Date().toISOString()}),
    )
    const shown = await actorsAsync(dir, ['control', dir, 'status'])
    expect(shown.code, shown.stderr).toBe(0)
    expectInert(shown)
    expect(shown.stdout).toBe(`playing 1/1  /music/${HOSTILE_SHOWN}.flac  volume 50\n`)
    const exact = await actorsAsync(dir, ['control', dir, 'status', '--json'])
    expect(exact.json.track).toBe(`/music/${HOSTILE}.flac`)
  })
})

describe('music serve', () => {
  it('prints a track whose file name holds ESC and U+202E escaped, and control DIR status too; --json exact', async () => {
    const root = home()
    const music = join(root, 'music')
    mkdirSync(music)
    const name = 't\u001b[2J\u202e.wav'
    writeTone(join(music, name), 30, 440)
    const dir = join(root, 'svc')
    const child = spawn(
      process.execPath,
      [BIN, 'music', 'serve', music, '--state-dir', dir, '--player', 'mpv', '--output', 'null'],
      {env: cliEnv(root), stdio: ['ignore', 'pipe', 'pipe']},
    )
    let out = ''
    let err = ''
    child.stdout.on('data', (d) => (out += d))
    child.stderr.on('data', (d) => (err += d))
    const exit = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
    try {
      await waitFor(
        () =>
          existsSync(join(dir, 'playback-endpoint.json')) && readJson(join(dir, 'playback.json')).state === 'playing',
        20_000,
        'the service to play',
      )
      const status = actors(root, ['control', dir, 'status'])
      expect(status.code, status.stderr).toBe(0)
      expect(status.stdout + status.stderr).not.toMatch(ACTIVE)
      expect(status.stdout).toContain(`${music}/t\\e[2J\\u202e.wav`)
      expect(actors(root, ['control', dir, 'status', '--json']).json.track).toBe(join(music, name))
      expect(actors(root, ['control', dir, 'stop']).code).toBe(0)
      expect(await exit).toBe(0)
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL')
    }
    expect(out + err).not.toMatch(ACTIVE)
    expect(out).toBe(`1/1 ${music}/t\\e[2J\\u202e.wav\n`)
  })
})
