import {spawnSync} from 'node:child_process'
import {mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync} from 'node:fs'
import {homedir, tmpdir} from 'node:os'
import {dirname, join, resolve} from 'node:path'
import {fileURLToPath} from 'node:url'
import {afterEach, beforeEach, describe, expect, it} from 'vitest'
import {isActorsError} from '../src/lib/base/platform/errors.js'
import {
  findRecipe,
  listRecipes,
  loadRecipeFile,
  recipeRoots,
  resolveRecipe,
  shellSplit,
  validateRecipeFiles,
  type Recipe,
} from '../src/lib/kernel/recipes/index.js'

const PACKAGE = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const RUNTIME = {run_id: 'r1', state_dir: '/state/r1'}

let dir: string
beforeEach(() => {
  dir = realpathSync(mkdtempSync(join(tmpdir(), 'actors-recipes-')))
})
afterEach(() => {
  rmSync(dir, {recursive: true, force: true})
})

function write(rel: string, text: string): string {
  const file = join(dir, rel)
  mkdirSync(dirname(file), {recursive: true})
  writeFileSync(file, text)
  return file
}

function load(text: string, rel = 'r.yaml'): Recipe {
  return loadRecipeFile(write(rel, text), dir)
}

/** Run `fn`, expect an ActorsError with exit 2, return it for message checks. */
function usage(fn: () => unknown): {message: string; fix?: string} {
  try {
    fn()
  } catch (error) {
    if (!isActorsError(error)) throw error
    expect(error.exitCode).toBe(2)
    return error
  }
  throw new Error('expected a usage error')
}

describe('loading', () => {
  it('loads a YAML Recipe with every field', () => {
    const recipe = load(
      [
        'description: Build it',
        'args: ["target", "jobs:int=2", "mode:enum(fast,slow)=fast"]',
        'template: make -j {jobs} {target}',
        'timeout: 5m',
        'kill_grace: 500ms',
        'retry: 3',
        'cwd: "{recipe_dir}"',
        'env: {MODE: "{mode}", N: 1}',
        'control: [next, prev_track]',
        'artifacts: {log: "out/{target}.log"}',
        'singleton: true',
        'notification: silent',
      ].join('\n'),
      'sub/build.yaml',
    )
    expect(recipe.name).toBe('sub/build')
    expect(recipe.description).toBe('Build it')
    expect(recipe.args).toEqual([
      {name: 'target', type: 'string'},
      {name: 'jobs', type: 'int', default: 2},
      {name: 'mode', type: {enum: ['fast', 'slow']}, default: 'fast'},
    ])
    expect(recipe.env).toEqual({MODE: '{mode}', N: '1'})
    expect(recipe.control).toEqual(['next', 'prev_track'])
    expect(recipe.singleton).toBe(true)
    expect(recipe.notification).toBe('silent')
    expect(recipe.retry).toBe(3)
  })

  it('loads a JSON Recipe with an argv-list template', () => {
    const recipe = load(JSON.stringify({args: ['n:int'], template: ['seq', '{n}']}), 'count.json')
    expect(recipe.name).toBe('count')
    const resolved = resolveRecipe(recipe, ['n=3'], RUNTIME)
    expect(resolved.plan).toEqual({mode: 'single', steps: [['seq', '3']]})
    expect(resolved.values).toEqual({n: 3})
    expect(resolved.retry).toBe(1)
    expect(resolved.killGraceMs).toBe(5000)
    expect(resolved.timeoutMs).toBeUndefined()
  })

  it('refuses an unknown field, naming file and field, with a suggestion', () => {
    const file = write('bad.yaml', 'tmplate: echo hi\n')
    const error = usage(() => loadRecipeFile(file, dir))
    expect(error.message).toBe(`${file}: field "tmplate" is not a Recipe field`)
    expect(error.fix).toMatch(/did you mean "template"\? allowed: description, args, template/)
  })

  it('refuses broken YAML and broken JSON, naming the file', () => {
    const yaml = write('broken.yaml', 'template: [echo\nargs: :\n')
    expect(usage(() => loadRecipeFile(yaml, dir)).message).toMatch(new RegExp(`^${yaml}: is not valid YAML`))
    const json = write('broken.json', '{"template": ')
    expect(usage(() => loadRecipeFile(json, dir)).message).toMatch(/broken\.json: is not valid JSON/)
    const list = write('list.yaml', '- echo\n')
    expect(usage(() => loadRecipeFile(list, dir)).message).toMatch(/is not a mapping/)
    // A small file whose aliases expand exponentially ("billion laughs").
    const levels = ['a: &a [x, x, x, x, x, x, x, x, x]']
    for (const [prev, name] of [
      ['a', 'b'],
      ['b', 'c'],
      ['c', 'd'],
      ['d', 'e'],
    ])
      levels.push(
        `${name}: &${name} [${Array(9)
          .fill('*' + prev)
          .join(', ')}]`,
      )
    const bomb = write('bomb.yaml', `${levels.join('\n')}\ntemplate: echo\n`)
    expect(usage(() => loadRecipeFile(bomb, dir)).message).toMatch(/bomb\.yaml: .*alias/)
  })

  it('refuses an oversized file before parsing it', () => {
    const file = write('big.yaml', `description: "${'x'.repeat(300 * 1024)}"\ntemplate: echo\n`)
    expect(usage(() => loadRecipeFile(file, dir)).message).toMatch(
      /big\.yaml: is \d+ bytes, over the 262144-byte limit/,
    )
  })

  it('refuses bad field values with the field named', () => {
    const cases: Array<[string, RegExp]> = [
      ['description: x\n', /field "template" is missing/],
      ['template: a\nsequence: [b]\n', /field "sequence" cannot be combined with "template"/],
      ['template: ""\n', /field "template" is empty/],
      ['template: echo "open\n', /field "template" cannot be split into words: unterminated double quote/],
      ['template: []\n', /field "template" is an empty list/],
      ['sequence: []\n', /field "sequence" is not a non-empty list/],
      ['template: x\ntimeout: soon\n', /field "timeout" "soon" is not a valid duration/],
      ['template: x\nkill_grace: [1]\n', /field "kill_grace" is not a duration/],
      ['template: x\nretry: 0\n', /field "retry" 0 is not a whole number of attempts from 1 to 100/],
      ['template: x\nretry: 101\n', /field "retry" 101 is not a whole number/],
      ['template: x\nretry: 1.5\n', /field "retry"/],
      ['template: x\ncontrol: [Next]\n', /field "control" action "Next" is not a valid name/],
      ['template: x\ncontrol: [kill]\n', /field "control" action "kill" is always the kernel's/],
      ['template: x\ncontrol: [a, a]\n', /field "control" lists an action twice/],
      [`template: x\ncontrol: [${'a'.repeat(65)}]\n`, /field "control"/],
      ['template: x\nenv: {1BAD: x}\n', /field "env" key "1BAD"/],
      ['template: x\nenv: {A: {b: 1}}\n', /field "env" value of "A" is not a string/],
      ['template: x\nsingleton: yes please\n', /field "singleton"/],
      ['template: x\nnotification: loud\n', /field "notification" "loud" is not normal or silent/],
      ['template: x\ninbox: socket\n', /field "inbox" "socket" is not stdin or file/],
      ['template: x\nresume: maybe\n', /field "resume" "maybe" is not true or false/],
      ['template: x\nargs: [{name: x}]\n', /field "args" args entry/],
      ['template: x\nargs: ["n:integer"]\n', /field "args" unknown arg type "integer"/],
      ['template: x\nargs: ["n:int=two"]\n', /field "args" default of arg "n": "two" is not an integer/],
      ['template: x\nargs: ["m:enum(a,b)=c"]\n', /field "args" default of arg "m": "c" is not one of a, b/],
      ['template: x\nargs: ["m:enum()"]\n', /field "args" enum type/],
      ['template: x\nargs: ["a", "a:int"]\n', /field "args" declares "a" twice/],
      ['template: x\nargs: ["run_id"]\n', /field "args" arg name "run_id" is reserved/],
      ['template: x\nargs: ["bad-name"]\n', /field "args" arg name "bad-name" is not valid/],
    ]
    for (const [text, pattern] of cases) {
      const file = write('case.yaml', text)
      const error = usage(() => loadRecipeFile(file, dir))
      expect(error.message, text).toMatch(pattern)
      expect(error.message.startsWith(`${file}: `), text).toBe(true)
      expect(error.fix, text).toBeTruthy()
    }
  })

  it("reads a Recipe's executor and its Slurm options, refusing a bad one by executor field with a fix", () => {
    const ok = load(
      'template: x\nexecutor: {kind: slurm, partition: debug, time: 90, cpus: 2, mem: 4G, gres: "gpu:1", account: 7, ' +
        `sbatch_args: '--qos=short --comment="a b"'}\n`,
    )
    expect(ok.executor).toEqual({
      kind: 'slurm',
      ...{partition: 'debug', time: 90, cpus: 2, mem: '4G', gres: 'gpu:1', account: '7'},
      sbatch_args: ['--qos=short', '--comment=a b'],
    })
    expect(load('template: x\nexecutor: {kind: slurm, sbatch_args: [--hold, 3]}\n').executor).toEqual({
      kind: 'slurm',
      sbatch_args: ['--hold', '3'],
    })
    expect(load('template: x\nexecutor: {kind: local}\n').executor).toEqual({kind: 'local'})
    // [the executor mapping (`slurm, ` reads `{kind: slurm, `), the field below executor, the problem, the fix]
    const kinds = 'write kind: local or kind: slurm'
    const word = (field: string) => `write ${field}: VALUE, as you would pass it to sbatch --${field}`
    const minutes = 'use 30s, 5m, 1h or a number of seconds (Slurm rounds up to whole minutes)'
    const allowed = 'did you mean "partition"? allowed: kind, partition, time, cpus, mem, gres, account, sbatch_args'
    const [time, mapping] = [
      'use 500ms, 30s, 5m, 1h or a number of seconds',
      'write executor: {kind: local | slurm, ...}',
    ]
    const [quotes, list] = [
      'close every quote, or write a list of words',
      'write sbatch_args: ["--qos=short", "--constraint=avx2"]',
    ]
    const cases: Array<[string, string, string, string]> = [
      ['[slurm]', '', 'is not a mapping', mapping],
      ['null', '', 'is not a mapping', mapping],
      ['slurm, partiton: x}', '.partiton', 'is not an executor field', allowed],
      ['{cpus: 2}', '.kind', 'is missing', kinds],
      ['{kind: pbs}', '.kind', '"pbs" is not local or slurm', kinds],
      ['{kind: 3}', '.kind', '3 is not local or slurm', kinds],
      ['{kind: local, cpus: 2}', '.cpus', 'applies to kind: slurm only', 'drop it, or write kind: slurm'],
      ['slurm, partition: "a b"}', '.partition', '"a b" is not a single word', word('partition')],
      ['slurm, gres: ""}', '.gres', '"" is not a single word', word('gres')],
      ['slurm, mem: [1]}', '.mem', '[1] is not a single word', word('mem')],
      ['slurm, cpus: 0}', '.cpus', '0 is not a whole number of CPUs', 'write cpus: 2'],
      ['slurm, cpus: 1.5}', '.cpus', '1.5 is not a whole number of CPUs', 'write cpus: 2'],
      ['slurm, cpus: "2"}', '.cpus', '"2" is not a whole number of CPUs', 'write cpus: 2'],
      ['slurm, time: forever}', '.time', '"forever" is not a duration', time],
      ['slurm, time: 0}', '.time', '0 is not a duration', minutes],
      ['slurm, time: true}', '.time', 'true is not a duration', minutes],
      [
        `slurm, sbatch_args: '--a "b'}`,
        '.sbatch_args',
        'cannot be split into words: unterminated double quote',
        quotes,
      ],
      ['slurm, sbatch_args: {a: 1}}', '.sbatch_args', 'is not a list of words', list],
      [
        'slurm, sbatch_args: [--a, {b: 1}]}',
        '.sbatch_args',
        'word {"b":1} is not a string',
        'write every word as a string',
      ],
    ]
    for (const [executor, field, problem, fix] of cases) {
      const file = write('case.yaml', `template: x\nexecutor: ${executor.replace(/^slurm, /, '{kind: slurm, ')}\n`)
      const error = usage(() => loadRecipeFile(file, dir))
      expect([error.message, error.fix], executor).toEqual([`${file}: field "executor${field}" ${problem}`, fix])
    }
  })

  it('refuses unknown placeholders in every templated field', () => {
    const cases: Array<[string, string]> = [
      ['template: echo {nme}\nargs: [name]\n', 'template'],
      ['sequence: [echo ok, "echo {x}"]\n', 'sequence[1]'],
      ['parallel: [[echo, "{y}"]]\n', 'parallel[0]'],
      ['template: x\ncwd: "{where}"\n', 'cwd'],
      ['template: x\nenv: {A: "{b}"}\n', 'env.A'],
      ['template: x\nartifacts: {log: "{c}.log"}\n', 'artifacts.log'],
    ]
    for (const [text, field] of cases) {
      const error = usage(() => load(text))
      expect(error.message, text).toMatch(
        new RegExp(`field "${field.replace(/[[\]]/g, '\\$&')}" uses unknown placeholder`),
      )
    }
    expect(usage(() => load('template: echo {nme}\nargs: [name]\n')).fix).toMatch(/did you mean "name"/)
  })

  it('refuses stray braces and accepts {{ }} escapes', () => {
    expect(usage(() => load("template: awk '{print $1}'\n")).message).toMatch(/is not a placeholder/)
    expect(usage(() => load('template: echo }\n')).message).toMatch(/stray "}"/)
    const recipe = load("template: awk '{{print $1}}' {file}\nargs: [file]\n")
    expect(resolveRecipe(recipe, ['file=a b'], RUNTIME).plan.steps[0]).toEqual(['awk', '{print $1}', 'a b'])
  })
})

describe('shell-like splitting', () => {
  it('handles quotes, backslashes and whitespace without a shell', () => {
    expect(shellSplit(`  echo  'a b'  "c \\"d\\" $HOME" e\\ f g\\\\h ''  `)).toEqual([
      'echo',
      'a b',
      'c "d" $HOME',
      'e f',
      'g\\h',
      '',
    ])
    expect(shellSplit('a;b | c && $(d)')).toEqual(['a;b', '|', 'c', '&&', '$(d)'])
    expect(shellSplit('x"y"\'z\'')).toEqual(['xyz'])
    expect(() => shellSplit("'open")).toThrow(/unterminated single quote/)
    expect(() => shellSplit('end\\')).toThrow(/trailing backslash/)
  })
})

describe('resolving values', () => {
  const typed = () =>
    load(
      [
        'args:',
        '  - "s"',
        '  - "p:path=out"',
        '  - "i:int=1"',
        '  - "n:number=0.5"',
        '  - "b:bool=false"',
        '  - "a:array=x,y"',
        '  - "e:enum(red,green)=red"',
        'template: [cmd, "{s}", "{p}", "{i}", "{n}", "{b}", "{a}", "--list={a}", "{e}"]',
      ].join('\n'),
    )

  it('applies defaults, converted to their types', () => {
    const r = resolveRecipe(typed(), ['s=hi'], {...RUNTIME, cwd: '/work'})
    expect(r.values).toEqual({s: 'hi', p: '/work/out', i: 1, n: 0.5, b: false, a: ['x', 'y'], e: 'red'})
    expect(r.plan.steps[0]).toEqual(['cmd', 'hi', '/work/out', '1', '0.5', 'false', 'x', 'y', '--list=x,y', 'red'])
  })

  it('converts each type from the command line', () => {
    const r = resolveRecipe(
      typed(),
      ['s=', 'p=~/music', 'i=-42', 'n=1e3', 'b=YES', 'a=["one two","three"]', 'e=green'],
      {...RUNTIME, cwd: '/work'},
    )
    expect(r.values).toEqual({
      s: '',
      p: join(homedir(), 'music'),
      i: -42,
      n: 1000,
      b: true,
      a: ['one two', 'three'],
      e: 'green',
    })
    expect(r.plan.steps[0]).toEqual([
      'cmd',
      '',
      join(homedir(), 'music'),
      '-42',
      '1000',
      'true',
      'one two',
      'three',
      '--list=one two,three',
      'green',
    ])
    expect(resolveRecipe(typed(), ['s=x', 'b=0', 'a='], RUNTIME).values).toMatchObject({b: false, a: []})
    expect(resolveRecipe(typed(), ['s=x', 'a=p', 'a=q,r'], RUNTIME).values.a).toEqual(['p', 'q', 'r'])
    expect(resolveRecipe(typed(), ['s=x', 'p=/abs/f'], RUNTIME).values.p).toBe('/abs/f')
  })

  it('refuses values not of their type, naming file, arg, value and fix', () => {
    const recipe = typed()
    const cases: Array<[string, RegExp]> = [
      ['i=1.5', /arg "i" \(i:int=1\): "1.5" is not an integer/],
      ['i=12abc', /"12abc" is not an integer/],
      ['i=99999999999999999999', /is not an integer/],
      ['n=Infinity', /"Infinity" is not a number/],
      ['n=0x10', /"0x10" is not a number/],
      ['b=maybe', /"maybe" is not a bool/],
      ['a=[1,', /is not a JSON array/],
      ['a=[{"x":1}]', /is not an array of strings/],
      ['e=blue', /arg "e" \(e:enum\(red,green\)=red\): "blue" is not one of red, green/],
      ['p=', /"" is not a path/],
    ]
    for (const [assignment, pattern] of cases) {
      const error = usage(() => resolveRecipe(recipe, ['s=x', assignment], RUNTIME))
      expect(error.message, assignment).toMatch(pattern)
      expect(error.message.startsWith(`${recipe.file}: `)).toBe(true)
      expect(error.fix, assignment).toBeTruthy()
    }
    expect(usage(() => resolveRecipe(recipe, ['s=x', 'e=blue'], RUNTIME)).fix).toBe('use one of: red, green')
  })

  it('refuses undeclared, missing, repeated and malformed args', () => {
    const recipe = typed()
    let error = usage(() => resolveRecipe(recipe, ['s=x', 'colour=red'], RUNTIME))
    expect(error.message).toBe(`${recipe.file}: arg "colour" is not declared by Recipe r`)
    expect(error.fix).toMatch(/declared args: s:string, p:path=out/)
    error = usage(() => resolveRecipe(recipe, [], RUNTIME))
    expect(error.message).toMatch(/arg "s" is required by Recipe r/)
    expect(error.fix).toMatch(/pass s=VALUE/)
    expect(usage(() => resolveRecipe(recipe, ['s=x', 's=y'], RUNTIME)).message).toMatch(/arg "s" is given twice/)
    expect(usage(() => resolveRecipe(recipe, ['s'], RUNTIME)).message).toMatch(/argument "s" is not NAME=VALUE/)
    expect(usage(() => resolveRecipe(recipe, ['=x'], RUNTIME)).message).toMatch(/is not NAME=VALUE/)
    expect(usage(() => resolveRecipe(load('template: x\n'), ['a=1'], RUNTIME)).fix).toMatch(/declares no args/)
  })

  it('keeps values with shell metacharacters as one argv word, never run', () => {
    const recipe = load('args: [msg]\ntemplate: echo "<{msg}>" {msg}\n')
    for (const value of [
      'a b  c',
      'x; rm -rf /',
      '$(id)',
      '`id`',
      `it's "quoted"`,
      'a|b>c&&d',
      '*',
      '',
      '{msg}',
      'a\nb',
    ]) {
      const r = resolveRecipe(recipe, [`msg=${value}`], RUNTIME)
      expect(r.plan.steps[0]).toEqual(['echo', `<${value}>`, value])
    }
    // Only the first "=" separates name and value.
    expect(resolveRecipe(recipe, ['msg=a=b'], RUNTIME).values.msg).toBe('a=b')
  })

  it('renders runtime values, cwd, env, artifacts and limits', () => {
    const recipe = load(
      [
        'args: ["out:path=res"]',
        'template: [run, "{run_id}", "{state_dir}", "{recipe_dir}"]',
        'cwd: "{recipe_dir}/work"',
        'env: {OUT: "{out}", RUN: "{run_id}", BRACES: "{{x}}"}',
        'artifacts: {log: "{state_dir}/log.txt", rel: "out.txt"}',
        'timeout: 90',
        'kill_grace: 2s',
        'retry: 4',
        'control: [next]',
      ].join('\n'),
    )
    const r = resolveRecipe(recipe, [], {...RUNTIME, cwd: '/caller'})
    expect(r.plan.steps[0]).toEqual(['run', 'r1', '/state/r1', dir])
    expect(r.cwd).toBe(join(dir, 'work'))
    expect(r.env).toEqual({OUT: '/caller/res', RUN: 'r1', BRACES: '{x}'})
    expect(r.artifacts).toEqual({log: '/state/r1/log.txt', rel: 'out.txt'})
    expect(r.timeoutMs).toBe(90_000)
    expect(r.killGraceMs).toBe(2000)
    expect(r.retry).toBe(4)
    expect(r.control).toEqual(['next'])
    expect(r.notification).toBe('normal')
    expect(r.singleton).toBe(false)
  })

  it('resolves a relative cwd against the caller, not the Recipe', () => {
    const r = resolveRecipe(load('template: x\ncwd: build\n'), [], {...RUNTIME, cwd: '/caller'})
    expect(r.cwd).toBe('/caller/build')
  })

  it('renders sequence and parallel plans', () => {
    const seq = resolveRecipe(load('args: ["n:int=2"]\nsequence: ["echo one", [sleep, "{n}"]]\n'), [], RUNTIME)
    expect(seq.plan).toEqual({
      mode: 'sequence',
      steps: [
        ['echo', 'one'],
        ['sleep', '2'],
      ],
    })
    const par = resolveRecipe(load('parallel: ["a 1", "b 2"]\n'), [], RUNTIME)
    expect(par.plan).toEqual({
      mode: 'parallel',
      steps: [
        ['a', '1'],
        ['b', '2'],
      ],
    })
  })

  it('refuses a command that renders empty', () => {
    const recipe = load('args: ["cmd:array="]\ntemplate: "{cmd}"\n')
    expect(usage(() => resolveRecipe(recipe, [], RUNTIME)).message).toMatch(
      /field "template" renders to an empty command/,
    )
  })
})

describe('roots and lookup', () => {
  let savedEnv: string | undefined
  beforeEach(() => {
    savedEnv = process.env.ACTORS_RECIPES
  })
  afterEach(() => {
    if (savedEnv === undefined) delete process.env.ACTORS_RECIPES
    else process.env.ACTORS_RECIPES = savedEnv
  })

  it('searches flag, env, ./recipes, home, package in order; first match wins', () => {
    const flag = join(dir, 'flag')
    const envA = join(dir, 'envA')
    const envB = join(dir, 'envB')
    const cwd = join(dir, 'proj')
    const home = join(dir, 'home')
    for (const [root, description] of [
      [flag, 'flag'],
      [envA, 'envA'],
      [envB, 'envB'],
      [join(cwd, 'recipes'), 'cwd'],
      [join(home, 'recipes'), 'home'],
    ]) {
      write(join(root.slice(dir.length + 1), 'x.yaml'), `description: ${description}\ntemplate: echo\n`)
      write(join(root.slice(dir.length + 1), `only-${description}.yaml`), `template: echo\n`)
    }
    process.env.ACTORS_RECIPES = `${envA}:${join(dir, 'missing')}::${envB}:${envA}`
    const roots = recipeRoots({recipesFlag: flag, home, cwd})
    expect(roots.map((r) => r.origin)).toEqual(['flag', 'env', 'env', 'cwd', 'home', 'package'])
    expect(roots[0].dir).toBe(flag)
    expect(roots.at(-1)!.dir).toBe(join(PACKAGE, 'recipes'))
    expect(findRecipe('x', roots).description).toBe('flag')
    expect(findRecipe('x', roots.slice(1)).description).toBe('envA')
    expect(findRecipe('x', roots.slice(3)).description).toBe('cwd')
    expect(findRecipe('x', roots.slice(4)).description).toBe('home')
    expect(findRecipe('only-home', roots).file).toBe(join(home, 'recipes', 'only-home.yaml'))
    expect(findRecipe('hello', roots).root).toBe(join(PACKAGE, 'recipes'))

    const listing = listRecipes(roots)
    expect(listing.find((r) => r.name === 'x')).toMatchObject({description: 'flag', origin: 'flag', root: flag})
    expect(listing.filter((r) => r.name === 'x')).toHaveLength(1)
    expect(listing.map((r) => r.name)).toEqual(expect.arrayContaining(['only-envB', 'only-cwd', 'hello', 'demo']))
  })

  it('skips missing roots and dedupes the same directory', () => {
    const roots = recipeRoots({recipesFlag: 'recipes', home: join(dir, 'nohome'), cwd: PACKAGE})
    expect(roots.map((r) => r.origin)).toEqual(['flag'])
  })

  it('finds nested names and prefers .yaml over .yml over .json', () => {
    write('lib/music/playback.json', '{"template": "json"}')
    write('lib/music/playback.yml', 'template: yml\n')
    write('lib/tool.json', '{"template": ["tool"], "description": "t"}')
    const roots = [{dir: join(dir, 'lib'), origin: 'flag'}]
    expect(findRecipe('music/playback', roots).template).toBe('yml')
    expect(findRecipe('tool', roots).name).toBe('tool')
    expect(listRecipes(roots).map((r) => [r.name, r.file.slice(dir.length)])).toEqual([
      ['music/playback', '/lib/music/playback.yml'],
      ['tool', '/lib/tool.json'],
    ])
  })

  it('refuses names that could escape a root, and names the roots on a miss', () => {
    const roots = [{dir, origin: 'flag'}]
    for (const name of ['../etc/passwd', 'a/../../b', '/etc/passwd', '', 'a//b', '.hidden']) {
      expect(usage(() => findRecipe(name, roots)).message, name).toMatch(/is not valid/)
    }
    const miss = usage(() => findRecipe('nothing', roots))
    expect(miss.message).toBe(`no Recipe named "nothing" (searched: ${dir} (flag))`)
    expect(miss.fix).toMatch(/actors recipes/)
  })

  it('accepts a direct path to a Recipe file', () => {
    write('here/my.yaml', 'template: echo mine\n')
    expect(findRecipe('./here/my.yaml', [], dir).template).toBe('echo mine')
    expect(findRecipe(join(dir, 'here/my.yaml'), []).name).toBe('my')
    expect(usage(() => findRecipe('./here/none.yaml', [], dir)).message).toMatch(/does not exist/)
  })

  it('lists broken files with their error instead of failing', () => {
    write('lib/good.yaml', 'description: fine\nargs: ["n:int=1"]\ntemplate: echo {n}\n')
    write('lib/bad.yaml', 'templat: echo\n')
    write('lib/ugly.yaml', ': : :\n  - [\n')
    write('lib/notes.txt', 'ignored')
    const listing = listRecipes([{dir: join(dir, 'lib'), origin: 'flag'}])
    expect(listing.map((r) => r.name)).toEqual(['bad', 'good', 'ugly'])
    expect(listing[1]).toMatchObject({description: 'fine', args: ['n:int=1']})
    expect(listing[0].error).toMatch(/field "templat" is not a Recipe field/)
    expect(listing[2].error).toMatch(/is not valid YAML/)
  })
})

describe('validation', () => {
  it('reports every file, good and bad, and expands directories', () => {
    write('v/good.yaml', 'template: echo\n')
    write('v/deep/bad.json', '{"template": "echo {x}"}')
    const results = validateRecipeFiles([join(dir, 'v'), join(dir, 'missing.yaml')])
    expect(results.map((r) => [r.file.slice(dir.length), r.ok])).toEqual([
      ['/v/deep/bad.json', false],
      ['/v/good.yaml', true],
      ['/missing.yaml', false],
    ])
    expect(results[0].error).toMatch(/field "template" uses unknown placeholder \{x\}/)
    expect(results[2].error).toMatch(/does not exist/)
  })

  it('the shipped library validates and its Recipes resolve with their defaults', () => {
    const library = join(PACKAGE, 'recipes')
    const results = validateRecipeFiles([library])
    expect(results.length).toBeGreaterThanOrEqual(3)
    for (const r of results) expect(r, r.file).toMatchObject({ok: true})
    const roots = [{dir: library, origin: 'package'}]
    expect(resolveRecipe(findRecipe('hello', roots), [], RUNTIME).plan.steps).toEqual([['echo', 'hello, world']])
    const echo = resolveRecipe(findRecipe('shell-free-echo', roots), ['text=$(id); ls *'], RUNTIME)
    expect(echo.plan.steps[0]).toEqual(['printf', '%s\n', '$(id); ls *'])
    const fanout = resolveRecipe(findRecipe('fanout', roots), ['count=2', 'values=seconds=1,x=y'], RUNTIME)
    expect(fanout.plan.steps[0].slice(3)).toEqual(['r1', 'hello', '2', 'seconds=1', 'x=y'])
  })
})

describe('the built CLI', () => {
  const bin = join(PACKAGE, 'bin', 'actors')
  const cli = (args: string[], cwd = dir) =>
    spawnSync(process.execPath, [bin, ...args], {
      cwd,
      encoding: 'utf8',
      env: {...process.env, ACTORS_HOME: join(dir, 'home'), ACTORS_RECIPES: ''},
    })

  it('lists Recipes as JSON and shows one', () => {
    write('recipes/mine.yaml', 'description: mine\nargs: ["n:int=1"]\ntemplate: echo {n}\n')
    const list = cli(['recipes', '--json'])
    expect(list.status).toBe(0)
    const doc = JSON.parse(list.stdout)
    expect(doc.recipes.find((r: {name: string}) => r.name === 'mine')).toMatchObject({
      args: ['n:int=1'],
      root: join(dir, 'recipes'),
    })
    expect(doc.recipes.find((r: {name: string}) => r.name === 'hello')).toBeTruthy()

    const show = cli(['recipes', 'mine', '--json'])
    expect(show.status).toBe(0)
    expect(JSON.parse(show.stdout)).toMatchObject({name: 'mine', plan: {mode: 'single', steps: [['echo', '{n}']]}})

    const human = cli(['recipes'])
    expect(human.status).toBe(0)
    expect(human.stdout).toMatch(/^RECIPE\s+ARGS\s+DESCRIPTION/)

    const missing = cli(['recipes', 'nope', '--json'])
    expect(missing.status).toBe(2)
    expect(JSON.parse(missing.stdout).error.message).toMatch(/no Recipe named "nope"/)
  })

  it('validates files with exit 0 or 2', () => {
    const good = write('good.yaml', 'template: echo\n')
    const bad = write('bad.yaml', 'template: echo\nretry: -1\n')
    const ok = cli(['recipes', 'validate', good, '--json'])
    expect(ok.status).toBe(0)
    expect(JSON.parse(ok.stdout)).toMatchObject({ok: true, files: [{ok: true}]})
    const mixed = cli(['recipes', 'validate', good, bad])
    expect(mixed.status).toBe(2)
    expect(mixed.stderr).toMatch(/field "retry" -1 is not a whole number of attempts from 1 to 100/)
    const json = cli(['recipes', 'validate', bad, '--json'])
    expect(json.status).toBe(2)
    expect(JSON.parse(json.stdout).files[0]).toMatchObject({ok: false, error: expect.stringMatching(/retry/)})
    expect(cli(['recipes', 'validate', join(PACKAGE, 'recipes')]).status).toBe(0)
  })
})
