/**
 * The fast front end (dist/fast-<command>.cjs) serves the hot commands without oclif.
 * These tests prove three things: it parses exactly what oclif would (or
 * declines), a hot command answers the same through either front end, and the
 * fast path really never loads the oclif bundle.
 */
import {spawnSync} from 'node:child_process'
import {mkdirSync, readFileSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {HOT_COMMANDS} from '../src/lib/surface/cli/hot-commands.js'
import {parseInvocation} from '../src/lib/surface/cli/parse-argv.js'
import {
  actors,
  cliEnv,
  type CliResult,
  packageWithout,
  removeDir,
  removeHome,
  ROOT,
  tempDir,
  waitForResult,
} from './helpers.js'

describe('the fast parser', () => {
  const run = HOT_COMMANDS.run
  const parse = (command: string, tokens: string[], env: NodeJS.ProcessEnv = {}) =>
    parseInvocation(HOT_COMMANDS[command], tokens, env)

  it('parses clean invocations into the same shape oclif gives', () => {
    expect(parseInvocation(run, ['--name', 'b1', '--retry=3', '--wait', '--', 'make', '--json', '-j2'], {})).toEqual({
      args: {recipe: 'make'},
      argv: ['make', '--json', '-j2'],
      passthrough: ['make', '--json', '-j2'],
      flags: {name: 'b1', retry: 3, wait: true, silent: false, follow: false},
      // --json after `--` belongs to the command, not to actors.
      json: false,
    })
    expect(parse('run', ['demo', 'count=3', '--json'])).toMatchObject({
      args: {recipe: 'demo'},
      argv: ['demo', 'count=3'],
      passthrough: undefined,
      json: true,
    })
    expect(parse('logs', ['r1', '-f', '--tail', '0'])).toMatchObject({
      args: {run: 'r1'},
      flags: {follow: true, tail: 0, stderr: false},
    })
    expect(parse('control', ['r1', 'volume', '40', '--home', '/tmp/h'])).toMatchObject({
      args: {run: 'r1', action: 'volume', value: '40'},
      flags: {home: '/tmp/h'},
    })
    expect(parse('inspect', [], {ACTORS_CONTENT_TYPE: 'JSON'})?.json).toBe(true)
    expect(parse('wait', ['a', 'b', '--any'])).toMatchObject({argv: ['a', 'b'], flags: {any: true}})
  })

  it('declines everything oclif has its own rules or messages for', () => {
    const declined = [
      ['run', ['--help']],
      ['run', ['-h']],
      ['run', ['--bogus', '--', 'true']],
      ['run', ['--name']],
      ['run', ['--name', '--wait', '--', 'true']],
      ['run', ['--name', '-x', '--', 'true']],
      ['run', ['--name', 'a', '--name', 'b']],
      ['run', ['--wait=yes', '--', 'true']],
      ['run', ['--retry', '0', '--', 'true']],
      ['run', ['--retry', '101', '--', 'true']],
      ['run', ['--retry', '2.5', '--', 'true']],
      ['run', ['--retry', '-1', '--', 'true']],
      ['logs', ['r1', '-fx']],
      ['logs', []],
      ['control', ['r1']],
      ['control', ['r1', 'volume', '40', 'extra']],
      ['control', ['r1', '--', 'status']],
      ['inspect', ['-5']],
      ['emit', ['x', '--json', '--json']],
      ['emit', ['x', '--constructor', 'y']],
      ['emit', ['x', '--__proto__', 'y']],
    ] as const
    for (const [command, tokens] of declined)
      expect(parse(command, [...tokens]), `${command} ${tokens.join(' ')}`).toBeUndefined()
  })

  it('bin/actors sends exactly the commands the fast front end serves: the list the build wrote, no copy of its own', () => {
    const listed = JSON.parse(readFileSync(join(ROOT, 'dist', 'hot-commands.json'), 'utf8'))
    expect([...listed].sort()).toEqual(Object.keys(HOT_COMMANDS).sort())
    const bin = readFileSync(join(ROOT, 'bin', 'actors'), 'utf8')
    expect(bin).toContain('hot-commands.json')
    for (const name of listed) expect(bin).not.toContain(`'${name}'`)
  })
})

/** Exit code and output, with what differs between any two invocations (batch ids, clock times) blanked. */
function normalised(r: CliResult) {
  const blank = (text: string) =>
    text
      .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, '<uuid>')
      .replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+Z/g, '<time>')
      .replace(/batch [0-9a-f]{8}/g, 'batch <id>')
  return {code: r.code, stdout: blank(r.stdout), stderr: blank(r.stderr)}
}

describe('either front end', () => {
  let home: string
  beforeAll(async () => {
    home = tempDir()
    const r = actors(home, ['run', '--json', '--name', 'done-1', '--', 'sh', '-c', 'echo out; echo err >&2; exit 3'])
    await waitForResult(r.json.state_dir)
  })
  afterAll(() => removeHome(home))

  it('answers every hot command alike: output, messages and exit code', () => {
    const cases = [
      ['inspect', '--json'],
      ['inspect', 'done-1', '--json'],
      ['inspect', '--tree'],
      ['inspect', '--status', 'bogus'],
      ['inspect', 'nope'],
      ['logs', 'done-1', '--stderr'],
      ['logs', 'done-1', '--tail', '1', '--json'],
      ['control', 'done-1', 'pause'],
      ['control', 'nope', 'status', '--json'],
      ['control', 'done-1', 'status', '--json'],
      ['emit', 'x.done'],
      ['wait', 'nope', '--json'],
      ['wait', 'nope'],
      ['run', '--name', '../escape', '--', 'true'],
      ['run', 'no-such-recipe'],
      ['run'],
      ['run', '--timeout', 'soon', '--', 'true'],
      // Declined by the fast parser: oclif answers both times.
      ['run', '--retry', '0', '--', 'true'],
      ['control', 'done-1'],
    ]
    for (const args of cases) {
      const fast = normalised(actors(home, args))
      const oclif = normalised(actors(home, args, {env: {ACTORS_FAST: '0'}}))
      const what = `actors ${args.join(' ')}`
      expect(fast, what).toEqual(oclif)
      expect(fast.stderr, what).not.toMatch(/\n\s+at /)
    }
    // 38 CLI calls in a row: allow for a loaded machine (each is ~0.1 s when quiet).
  }, 180_000)
})

describe('the fast path', () => {
  let pkg: string
  let home: string
  beforeAll(() => {
    // Without the oclif bundle only the fast path can work; nor the MCP bundle: no hot command may load it.
    // This copy keeps dist/yaml.cjs (its Recipe is YAML); the lean copy below has none.
    pkg = packageWithout(['cli', 'mcp'])
    home = tempDir()
    mkdirSync(join(home, 'recipes'))
    writeFileSync(join(home, 'recipes', 'echo.yaml'), 'args:\n  - word\ntemplate: echo {word}\n')
  })
  afterAll(() => {
    removeHome(home)
    removeDir(pkg)
  })

  /** `actors ARGS` from the package copy in `dir` (this state root). */
  const cliOf = (dir: string) => (args: string[]) =>
    spawnSync(process.execPath, [join(dir, 'bin', 'actors'), ...args], {
      env: cliEnv(home),
      encoding: 'utf8',
      timeout: 30_000,
    })
  const cli = (args: string[]) => cliOf(pkg)(args)

  it('launches, waits, inspects, controls and reads logs without loading oclif', () => {
    const launched = cli(['run', '--json', '--wait', 'echo', 'word=hi'])
    expect(launched.stderr).toBe('')
    expect(launched.status).toBe(0)
    const [row] = JSON.parse(launched.stdout).rows
    expect(row).toMatchObject({status: 'done', output: 'hi\n'})
    const run = row.run
    expect(cli(['logs', run]).stdout).toBe('hi\n')
    expect(JSON.parse(cli(['inspect', '--json']).stdout).runs.map((r: {run: string}) => r.run)).toEqual([run])
    expect(cli(['control', run, 'status']).stdout).toMatch(/status: +done/)
    expect(cli(['wait', '--json']).status).toBe(0)
    // ...and the reading commands load none of the built-ins that cost milliseconds (src/lib/base/platform/builtins.ts),
    // nor node:module with its share of the ES module loader (bin/actors and the bundles need neither), nor Node's
    // file watcher (about 10 ms) when what a wait waits for is there at its first look...
    const loadedBy = (args: string[]) => {
      const list = join(home, 'loaded.txt')
      const preload = join(home, 'list-modules.cjs')
      writeFileSync(
        preload,
        `process.on('exit', () => require('fs').writeFileSync(${JSON.stringify(list)}, process.moduleLoadList.join('\\n')))`,
      )
      // Output to /dev/null: a pipe on stdout is itself a net.Socket, which would load node:net.
      spawnSync(process.execPath, ['--require', preload, join(pkg, 'bin', 'actors'), ...args], {
        env: cliEnv(home),
        stdio: 'ignore',
      })
      return readFileSync(list, 'utf8')
        .split('\n')
        .filter((m) => /^NativeModule (net|crypto|child_process|module|internal\/fs\/watchers)$/.test(m))
    }
    for (const args of [
      ['inspect', '--json'],
      ['control', run, 'status'],
      ['logs', run],
      ['wait', '--json'],
    ])
      expect(loadedBy(args), args.join(' ')).toEqual([])
    // (a launch does load them: it hands its Run to the state root's host over the host's socket)
    expect(loadedBy(['run', '--', 'true'])).toContain('NativeModule net')
    // ...while help and the other commands need the oclif bundle this copy lacks.
    expect(cli(['run', '--help']).status).not.toBe(0)
    expect(cli(['recipes']).status).not.toBe(0)
  })

  it('serves every hot command that reads no YAML Recipe without the yaml bundle, which a YAML Recipe loads', async () => {
    // The yaml library is its own bundle (dist/yaml.cjs), loaded only when a YAML Recipe is parsed.
    const lean = packageWithout(['cli', 'mcp', 'yaml'])
    try {
      const leanCli = cliOf(lean)
      // An ad-hoc Run whose command emits through the same lean CLI: run, emit (inside the Run) and wait.
      const emitting = leanCli([
        'run',
        '--json',
        '--name',
        'lean-emit',
        '--wait',
        '--',
        process.execPath,
        join(lean, 'bin', 'actors'),
        'emit',
        'lean.done',
        '--summary',
        'no yaml',
      ])
      expect(emitting.stderr).toBe('')
      expect(JSON.parse(emitting.stdout).rows[0]).toMatchObject({run: 'lean-emit', status: 'done'})
      const detail = JSON.parse(leanCli(['inspect', 'lean-emit', '--json']).stdout)
      expect(JSON.stringify(detail)).toContain('lean.done')
      // A JSON Recipe needs no YAML parser.
      writeFileSync(join(home, 'recipes', 'echo-json.json'), JSON.stringify({args: ['word'], template: 'echo {word}'}))
      const fromJson = leanCli(['run', '--json', '--wait', 'echo-json', 'word=json'])
      expect(fromJson.stderr).toBe('')
      expect(JSON.parse(fromJson.stdout).rows[0]).toMatchObject({status: 'done', output: 'json\n'})
      const live = JSON.parse(leanCli(['run', '--json', '--', 'sleep', '60']).stdout).run
      expect(leanCli(['control', live, 'status']).stdout).toMatch(/status: +running/)
      expect(leanCli(['control', live, 'stop']).status).toBe(0)
      expect(leanCli(['wait', live, '--json']).status).not.toBe(2)
      expect(leanCli(['logs', 'lean-emit']).status).toBe(0)
      const runs = JSON.parse(leanCli(['inspect', '--json']).stdout).runs.map((r: {run: string}) => r.run)
      expect(runs).toEqual(expect.arrayContaining(['lean-emit', live]))
      // The package really lacks it: a YAML Recipe cannot start there, and starts where the bundle is (the test above).
      expect(leanCli(['run', '--json', '--wait', 'echo', 'word=hi']).status).not.toBe(0)
      expect(cli(['run', '--json', '--wait', 'echo', 'word=again']).status).toBe(0)
    } finally {
      removeDir(lean)
    }
  }, 120_000)

  it('starts an ad-hoc Run and reads Runs without the zod bundle, which validating a Recipe loads', () => {
    // zod is its own bundle (dist/zod.cjs), loaded only when a Recipe is validated (src/lib/base/platform/zod.ts).
    const lean = packageWithout(['cli', 'mcp', 'zod'])
    try {
      const leanCli = cliOf(lean)
      const adHoc = leanCli(['run', '--json', '--name', 'lean-zod', '--wait', '--', 'echo', 'no zod'])
      expect(adHoc.stderr).toBe('')
      expect(JSON.parse(adHoc.stdout).rows[0]).toMatchObject({run: 'lean-zod', status: 'done', output: 'no zod\n'})
      expect(leanCli(['inspect', 'lean-zod', '--json']).status).toBe(0)
      expect(leanCli(['logs', 'lean-zod']).stdout).toBe('no zod\n')
      // The package really lacks it: a Recipe cannot start there, and starts where the bundle is.
      expect(leanCli(['run', '--json', '--wait', 'echo', 'word=hi']).status).not.toBe(0)
      expect(cli(['run', '--json', '--wait', 'echo', 'word=again']).status).toBe(0)
    } finally {
      removeDir(lean)
    }
  }, 120_000)

  it('launches, supervises, stops, inspects and waits without the execa bundle, which `lock exec` loads', () => {
    // execa is its own bundle (dist/execa.cjs, src/lib/base/platform/execa.ts), about 40 ms and 10 MB to evaluate: the
    // launch, the supervisor and the reading commands start processes with node:child_process, if at all.
    const lean = packageWithout(['execa'])
    try {
      const leanCli = cliOf(lean)
      const done = leanCli(['run', '--json', '--name', 'lean-execa', '--wait', '--', 'sh', '-c', 'echo no execa'])
      expect(done.stderr).toBe('')
      expect(JSON.parse(done.stdout).rows[0]).toMatchObject({run: 'lean-execa', status: 'done', output: 'no execa\n'})
      const live = JSON.parse(leanCli(['run', '--json', '--', 'sleep', '60']).stdout).run
      expect(leanCli(['control', live, 'status']).stdout).toMatch(/status: +running/)
      expect(leanCli(['control', live, 'stop']).status).toBe(0)
      expect(leanCli(['wait', live, '--json']).stderr).toBe('')
      expect(JSON.parse(leanCli(['inspect', live, '--json']).stdout)).toMatchObject({status: 'cancelled'})
      expect(leanCli(['inspect', '--json']).status).toBe(0)
      // The package really lacks it: `lock exec` cannot start its command there, and can where the bundle is.
      expect(leanCli(['lock', 'exec', 'lean', '--', 'true']).status).not.toBe(0)
      expect(cliOf(ROOT)(['lock', 'exec', 'lean', '--', 'true']).status).toBe(0)
    } finally {
      removeDir(lean)
    }
  }, 120_000)

  it('serves each hot command from its own bundle, without the other hot commands', () => {
    const hot: string[] = JSON.parse(readFileSync(join(ROOT, 'dist', 'hot-commands.json'), 'utf8'))
    const only = packageWithout([
      'cli',
      'mcp',
      'yaml',
      ...hot.filter((name) => name !== 'inspect').map((name) => `fast-${name}`),
    ])
    try {
      const listed = spawnSync(process.execPath, [join(only, 'bin', 'actors'), 'inspect', '--json'], {
        env: cliEnv(home),
        encoding: 'utf8',
        timeout: 30_000,
      })
      expect(listed.stderr).toBe('')
      expect(JSON.parse(listed.stdout).runs.length).toBeGreaterThan(0)
      // The launcher is not in that copy at all: `run` has neither its front nor oclif there.
      expect(
        spawnSync(process.execPath, [join(only, 'bin', 'actors'), 'run', '--', 'true'], {
          env: cliEnv(home),
          encoding: 'utf8',
          timeout: 30_000,
        }).status,
      ).not.toBe(0)
    } finally {
      removeDir(only)
    }
  })
})

describe('the MCP bundle', () => {
  let pkg: string
  let home: string
  beforeAll(() => {
    // Without dist/mcp.cjs and dist/mcp-server.cjs every command but `actors mcp` must still work.
    pkg = packageWithout(['mcp', 'mcp-server'])
    home = tempDir()
  })
  afterAll(() => {
    removeHome(home)
    removeDir(pkg)
  })

  const cli = (args: string[]) =>
    spawnSync(process.execPath, [join(pkg, 'bin', 'actors'), ...args], {
      env: cliEnv(home),
      encoding: 'utf8',
      timeout: 30_000,
    })

  it('is loaded by `actors mcp` only', () => {
    const launched = cli(['run', '--json', '--wait', 'hello'])
    expect(launched.stderr).toBe('')
    expect(JSON.parse(launched.stdout).rows[0]).toMatchObject({status: 'done'})
    for (const args of [
      ['inspect', '--json'],
      ['recipes', '--json'],
      ['prune', '--json'],
      ['run', '--help'],
      ['mcp', '--help'],
      ['wait', '--json'],
    ]) {
      expect(cli(args).status, args.join(' ')).toBe(0)
    }
    expect(cli(['mcp']).stderr).toMatch(/mcp\.cjs/)
  })
})
