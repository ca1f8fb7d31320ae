/**
 * Values never become options (SPEC: Recipes; docs/recipes.md "Values never
 * become options"): a string or array value that begins an argv word with
 * "-" is refused (exit 2, naming the file, the arg and the value) unless the
 * Recipe lists the arg under option_args. Numbers may be negative; a value
 * after literal text in its word is never an option.
 */
import {mkdtempSync, realpathSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join, resolve} from 'node:path'
import {afterEach, beforeEach, describe, expect, it} from 'vitest'
import {
  describeRecipe,
  findRecipe,
  loadRecipeFile,
  resolveRecipe,
  type Recipe,
} from '../src/lib/kernel/recipes/index.js'
import {refusal} from './helpers.js'

const RUNTIME = {run_id: 'r1', state_dir: '/state/r1', cwd: '/work'}

let dir: string
beforeEach(() => {
  dir = realpathSync(mkdtempSync(join(tmpdir(), 'actors-option-args-')))
})
afterEach(() => {
  rmSync(dir, {recursive: true, force: true})
})

function load(lines: string[]): Recipe {
  const file = join(dir, 'r.yaml')
  writeFileSync(file, lines.join('\n'))
  return loadRecipeFile(file, dir)
}

const LAUNCHER = [
  'args: ["recipe=hello", "extra:array=", "n:int=1", "mode:enum(-a,b)=b"]',
  'template: [actors, run, "{recipe}", "--label={recipe}", "x{extra}", "{n}", "{mode}", "{extra}"]',
]

describe('values that would become options', () => {
  it('refuses a string value that is a whole word starting with "-", naming the arg and the value', () => {
    const error = refusal(() => resolveRecipe(load(LAUNCHER), ['recipe=--silent'], RUNTIME))
    expect(error.exitCode).toBe(2)
    expect(error.message).toContain('field "template"')
    expect(error.message).toContain('arg "recipe" has the value "--silent"')
    expect(error.fix).toContain('option_args')
  })

  it('refuses each item of an array filling a word, and a value that begins a word of placeholders', () => {
    expect(refusal(() => resolveRecipe(load(LAUNCHER), ['extra=ok,--', 'recipe=hello'], RUNTIME)).message).toContain(
      'arg "extra" has the value "--"',
    )
    const joined = load(['args: ["a=", "b="]', 'template: [echo, "{a}{b}"]'])
    expect(refusal(() => resolveRecipe(joined, ['b=-n'], RUNTIME)).message).toContain('arg "b" has the value "-n"')
  })

  it('lets through negative numbers, enum values, values after literal text, and args under option_args', () => {
    const r = resolveRecipe(load(LAUNCHER), ['n=-3', 'mode=-a'], RUNTIME)
    expect(r.plan.steps[0]).toEqual(['actors', 'run', 'hello', '--label=hello', 'x', '-3', '-a'])
    const allowed = load([...LAUNCHER, 'option_args: [extra]'])
    expect(resolveRecipe(allowed, ['extra=-v'], RUNTIME).plan.steps[0].at(-1)).toBe('-v')
  })

  it('checks a Recipe imported by use with its own option_args', () => {
    writeFileSync(join(dir, 'inner.yaml'), 'args: ["text="]\ntemplate: [printf, "%s", "{text}"]\n')
    const outer = load(['args: ["t="]', 'sequence:', '  - use: inner', '    with: {text: "{t}"}'])
    expect(refusal(() => resolveRecipe(outer, ['t=-x'], RUNTIME)).message).toContain('arg "text" has the value "-x"')
  })

  it('refuses option_args naming an undeclared arg when the file loads', () => {
    const error = refusal(() => load(['args: ["text="]', 'option_args: [txt]', 'template: [echo, "{text}"]']))
    expect(error.message).toContain('field "option_args" names "txt", which is not a declared arg')
    expect(refusal(() => load(['option_args: text', 'template: [echo]'])).message).toContain('is not a list')
  })
})

describe('the shipped Recipes', () => {
  const shipped = (name: string) => {
    const dir = resolve(import.meta.dirname, '..', 'recipes')
    return findRecipe(name, [{dir, origin: 'package'}])
  }

  it('refuse a value that would be an option of the inner command (actors run, music serve, node)', () => {
    const cases: Array<[string, string[], string]> = [
      ['fanout', ['recipe=--silent'], 'arg "recipe" has the value "--silent"'],
      ['fanout', ['values=["--","sh","-c","id"]'], 'arg "values" has the value "--"'],
      ['music/playback', ['source=--player=mpv'], 'arg "source" has the value "--player=mpv"'],
      ['steer/line-service', ['prefix=--require=/tmp/x.js'], 'arg "prefix" has the value "--require=/tmp/x.js"'],
    ]
    for (const [name, values, message] of cases) {
      const error = refusal(() => resolveRecipe(shipped(name), values, RUNTIME))
      expect(error.exitCode, name).toBe(2)
      expect(error.message).toContain(message)
    }
  })

  it("take options where they say so: a whole command, and text after printf's format", () => {
    expect(describeRecipe(shipped('checkout-build')).option_args).toEqual(['command'])
    expect(describeRecipe(shipped('fanout')).option_args).toEqual([])
    expect(resolveRecipe(shipped('checkout-build'), ['command=make,-j2'], RUNTIME).plan.steps[0]).toEqual([
      'make',
      '-j2',
    ])
    expect(resolveRecipe(shipped('shell-free-echo'), ['text=-n'], RUNTIME).plan.steps[0]).toEqual([
      'printf',
      '%s\n',
      '-n',
    ])
  })
})
