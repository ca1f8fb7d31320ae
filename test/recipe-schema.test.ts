/**
 * `actors recipes --schema`: the JSON Schema an editor's YAML language server validates Recipes with
 * (docs/recipes.md). Every shipped Recipe passes it, checked by ajv (a second validator, not zod), and
 * a broken one does not.
 */
import {readdirSync, readFileSync} from 'node:fs'
import {join, relative} from 'node:path'
import {Ajv} from 'ajv'
import {parse} from 'yaml'
import {describe, expect, it} from 'vitest'
import {actors, homesPerTest, ROOT} from './helpers.js'

const home = homesPerTest('actors-schema-')

function shippedRecipes(dir = join(ROOT, 'recipes')): string[] {
  return readdirSync(dir, {withFileTypes: true}).flatMap((entry) => {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) return shippedRecipes(path)
    return /\.(ya?ml|json)$/.test(entry.name) ? [path] : []
  })
}

describe('actors recipes --schema', () => {
  it('prints a draft-07 JSON Schema that every shipped Recipe passes and a broken one fails', () => {
    const r = actors(home(), ['recipes', '--schema'])
    expect(r.code, r.stderr).toBe(0)
    const schema = JSON.parse(r.stdout)
    expect(schema.$schema).toBe('http://json-schema.org/draft-07/schema#')
    const validate = new Ajv({allErrors: true, allowUnionTypes: true}).compile(schema)
    const files = shippedRecipes()
    expect(files.length).toBeGreaterThan(5)
    for (const file of files) {
      const ok = validate(parse(readFileSync(file, 'utf8')))
      expect(ok, `${relative(ROOT, file)}: ${JSON.stringify(validate.errors)}`).toBe(true)
    }
    const hello = parse(readFileSync(join(ROOT, 'recipes', 'hello.yaml'), 'utf8'))
    for (const broken of [
      {...hello, tmplate: 'echo hi'},
      {...hello, retry: 0},
      {...hello, notification: 'loud'},
      {...hello, template: {echo: 1}},
      {sequence: [{repeat: {times: 2, template: 'x', twice: true}}]},
      {...hello, locks: [{name: 'gpu', slots: 0}]},
    ]) {
      expect(validate(broken), JSON.stringify(broken)).toBe(false)
    }
  })
})
