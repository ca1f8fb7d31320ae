/**
 * The conventions a shell user reaches for (SPEC "Commands", Conventions):
 * -h, -v/--version/version, shell completion that knows Recipes and live
 * Runs, and "did you mean" for Recipe and command typos.
 */
import {spawnSync} from 'node:child_process'
import {dirname} from 'node:path'
import {describe, expect, it} from 'vitest'
import {completions, type CompletionCommand} from '../src/lib/surface/cli/complete.js'
import {actors, BIN, cliEnv, homesPerTest, homeWithRecipes, removeHome} from './helpers.js'

const home = homesPerTest('actors-conv-')
const VERSION_LINE = /^actors\/\d+\.\d+\.\d+ \S+-\S+ node-v\d+\.\d+\.\d+\n$/

describe('help and version', () => {
  it('-h is --help, on the CLI and on every command (the fast path declines it)', () => {
    const h = home()
    const root = actors(h, ['-h'])
    expect(root.code).toBe(0)
    expect(root.stdout).toBe(actors(h, ['--help']).stdout)
    for (const words of [['run'], ['inspect'], ['lock', 'acquire'], ['mcp']]) {
      const short = actors(h, [...words, '-h'])
      expect(short.code, words.join(' ')).toBe(0)
      expect(short.stdout, words.join(' ')).toBe(actors(h, [...words, '--help']).stdout)
    }
    // After `--`, -h belongs to the command: the Run starts.
    expect(actors(h, ['run', '--json', '--', 'sh', '-c', 'exit 0', '-h']).json?.run).toBeTruthy()
  })

  it('--version, -v and `version` print the same line; `version --json` a document', () => {
    const h = home()
    const lines = [['--version'], ['-v'], ['version']].map((a) => actors(h, a))
    for (const r of lines) {
      expect(r.code).toBe(0)
      expect(r.stdout).toMatch(VERSION_LINE)
      expect(r.stdout).toBe(lines[0].stdout)
    }
    expect(actors(h, ['version', '--json']).json).toMatchObject({
      name: 'actors',
      version: expect.any(String),
      node: process.version,
    })
  })
})

describe('did you mean', () => {
  it('suggests the nearest Recipe and the nearest command', () => {
    const h = home()
    const recipe = actors(h, ['run', 'helo'])
    expect(recipe.code).toBe(2)
    expect(recipe.stderr).toContain('did you mean "hello"?')
    const command = actors(h, ['runn'])
    expect(command.code).toBe(2)
    expect(command.stderr).toContain('did you mean "run"?')
    expect(actors(h, ['lock', 'acquir']).stderr).toContain('did you mean "lock acquire"?')
  })

  it('suggests the nearest flag of the command, in one hint (on both front ends, and under --json)', () => {
    const h = home()
    for (const fast of ['1', '0']) {
      const typo = actors(h, ['inspect', '--stauts', 'running'], {env: {ACTORS_FAST: fast}})
      expect(typo.code).toBe(2)
      expect(typo.stderr).toBe(
        'actors: Nonexistent flag: --stauts\n  fix: did you mean "--status"? see `actors inspect --help`\n',
      )
    }
    const json = actors(h, ['run', '--wiat', '--json', '--', 'true'])
    expect(json.json.error).toMatchObject({exit_code: 2, fix: 'did you mean "--wait"? see `actors run --help`'})
    // The top-level help describes the lock and music topics as topics, not with one subcommand's sentence.
    const help = actors(h, ['--help']).stdout.replace(/\s+/g, ' ')
    expect(help).toContain('lock Named locks shared by Runs and scripts')
    expect(help).toContain('music A music player')
    // Nothing near: no guess, the help only.
    expect(actors(h, ['inspect', '--zzzzzzzz']).stderr).toContain('fix: see `actors inspect --help`')
  })
})

/** What bash completes for `line` (the text before the cursor) with the real script and CLI. */
function bashComplete(h: string, line: string): string[] {
  const script = actors(h, ['autocomplete', 'script', 'bash']).stdout
  const words = line.split(' ')
  const program = `${script}\nCOMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${words.length - 1}; _actors_complete; printf '%s\\n' "\${COMPREPLY[@]}"`
  const r = spawnSync('bash', ['-c', program], {
    env: {...cliEnv(h), PATH: `${dirname(BIN)}:${process.env.PATH}`},
    encoding: 'utf8',
    cwd: dirname(dirname(BIN)),
  })
  return r.stdout.split('\n').filter(Boolean)
}

describe('autocomplete', () => {
  it('prints setup steps and a bash script that completes commands, flags, Recipe names and live Run ids', () => {
    const h = home()
    const setup = actors(h, ['autocomplete', 'bash'])
    expect(setup.code).toBe(0)
    expect(setup.stdout).toContain('eval "$(actors autocomplete script bash)"')
    for (const shell of ['zsh', 'powershell'])
      expect(actors(h, ['autocomplete', 'script', shell]).stdout).toContain('actors __complete')
    expect(actors(h, ['autocomplete', 'fish']).code).toBe(2)

    expect(bashComplete(h, 'actors ru')).toEqual(['run'])
    expect(bashComplete(h, 'actors lock ')).toEqual(['acquire', 'exec', 'release', 'renew', 'status'])
    expect(bashComplete(h, 'actors run hel')).toEqual(['hello'])
    expect(bashComplete(h, 'actors run --ti')).toEqual(['--timeout'])
    const live = actors(h, ['run', '--name', 'sleeper', '--json', '--', 'sleep', '30'])
    expect(live.code).toBe(0)
    actors(h, ['run', '--name', 'quick', '--wait', '--json', '--', 'true'])
    expect(bashComplete(h, 'actors control ')).toEqual(['sleeper'])
    expect(bashComplete(h, 'actors control sleeper ')).toContain('pause')
    expect(bashComplete(h, 'actors logs ')).toEqual(['quick', 'sleeper'])
  }, 60_000)

  it("completes a live Run's declared actions after its id, beside the kernel's", () => {
    const {home: h, recipes} = homeWithRecipes({'svc.yaml': 'control: [volume, next, seek]\ntemplate: [sleep, "30"]\n'})
    const env = {ACTORS_RECIPES: recipes}
    try {
      expect(actors(h, ['run', 'svc', '--name', 'svc1', '--json'], {env}).code).toBe(0)
      expect(actors(h, ['run', '--name', 'plain', '--json', '--', 'sleep', '30']).code).toBe(0)
      const svc = bashComplete(h, 'actors control svc1 ')
      expect(svc).toEqual(expect.arrayContaining(['volume', 'next', 'seek', 'pause', 'stop']))
      expect(bashComplete(h, 'actors control svc1 v')).toEqual(['volume'])
      expect(bashComplete(h, 'actors control plain ')).not.toContain('volume')
      // Flags before the Run do not count as the Run.
      expect(bashComplete(h, 'actors control --json svc1 se')).toEqual(['seek'])
    } finally {
      removeHome(h)
    }
  }, 60_000)

  it('knows where a flag takes a value and what the arguments name', () => {
    const surface: Record<string, CompletionCommand> = {
      run: {flags: {on: {takesValue: true, options: ['local', 'slurm']}, wait: {takesValue: false}}, args: ['recipe']},
      'lock:acquire': {flags: {}, args: ['none']},
    }
    const sources = {recipes: () => ['hello', 'demo'], runs: () => ['r1'], actions: () => []}
    expect(completions(surface, ['run', '--on'], '', sources)).toEqual(['local', 'slurm'])
    expect(completions(surface, ['run', '--wait'], 'h', sources)).toEqual(['hello'])
    expect(completions(surface, ['run', 'hello'], '', sources)).toEqual([])
    expect(completions(surface, [], 'l', sources)).toEqual(['lock'])
    expect(completions(surface, ['run', '--home'], '', sources)).toEqual([])
    expect(completions(surface, ['run', '--home', '/tmp/h'], 'd', sources)).toEqual(['demo'])
  })
})
