/**
 * `use: RECIPE` steps (SPEC: Recipes): finding the used Recipe, refusing a
 * cycle of `use` before anything starts (exit 2, naming the chain), and
 * checking `with:` against the used Recipe's args as a launch would.
 */
import {existsSync, statSync} from 'node:fs'
import {dirname, extname, isAbsolute, join, resolve} from 'node:path'
import {InputProblem, type ActorsError} from '../../base/platform/errors.js'
import {convertArgValue, formatArgSpec} from './args.js'
import {didYouMean} from '../../base/platform/did-you-mean.js'
import {loadRecipeFile, recipeError, RECIPE_EXTENSIONS} from './load.js'
import {isRepeat, isUse, type Step, type UseStep} from './steps.js'
import {placeholdersOf} from './template.js'
import type {Recipe} from './types.js'

const NAME_SEGMENT = /^[A-Za-z0-9_.-]+$/
/** How many directories above the using file are searched after its root (a file validated or re-resolved on its own). */
const MAX_ANCESTORS = 8

function isFile(path: string): boolean {
  return existsSync(path) && statSync(path).isFile()
}

/**
 * Find the Recipe a `use` names: a name below the using Recipe's root (the
 * same library), else below a directory above the using file (a file checked
 * on its own), or a path ending in .yaml/.yml/.json relative to the using file.
 */
export function findUsedRecipe(name: string, from: Recipe, field: string): Recipe {
  const fail = (problem: string, fix: string) => recipeError(from.file, field, problem, fix)
  if ((RECIPE_EXTENSIONS as readonly string[]).includes(extname(name))) {
    const file = resolve(dirname(from.file), name)
    if (!isFile(file))
      throw fail(
        `uses ${name}, which does not exist`,
        'give a path relative to this Recipe file, or a Recipe name such as hello',
      )
    return loadRecipeFile(file, dirname(file))
  }
  const segments = name.split('/')
  if (isAbsolute(name) || segments.some((s) => !NAME_SEGMENT.test(s) || s === '..' || s === '.')) {
    throw fail(
      `uses ${JSON.stringify(name)}, which is not a Recipe name`,
      'use a name below the same root such as hello or music/playback (no "..", no absolute paths)',
    )
  }
  const roots = [from.root]
  for (let dir = dirname(from.file), i = 0; i < MAX_ANCESTORS && !roots.includes(dir); i++, dir = dirname(dir)) {
    roots.push(dir)
    if (dirname(dir) === dir) break
  }
  for (const root of roots) {
    for (const ext of RECIPE_EXTENSIONS) {
      const file = join(root, ...segments) + ext
      if (isFile(file)) return loadRecipeFile(file, root)
    }
  }
  throw fail(
    `uses "${name}", but no such Recipe is below ${from.root}`,
    'name a Recipe of the same library (see `actors recipes`), or a file path such as ./other.yaml',
  )
}

/** Refuse a `use` that comes back to a Recipe already on the chain: `a -> b -> a`. */
export function refuseUseCycle(chain: Recipe[], used: Recipe, field: string): void {
  if (!chain.some((r) => r.file === used.file)) return
  const names = [...chain.map((r) => r.name), used.name].join(' -> ')
  const from = chain[chain.length - 1]
  throw recipeError(
    from.file,
    field,
    `makes a cycle of use: ${names}`,
    'break the cycle: a Recipe may not use itself, directly or through others',
  )
}

/** The steps of a Recipe with the field name each stands at, repeat bodies included. */
function usesIn(steps: Step[], field: string): Array<{field: string; step: UseStep}> {
  return steps.flatMap((step, i) => {
    const here = `${field}[${i}]`
    if (isUse(step)) return [{field: here, step}]
    if (isRepeat(step)) return step.repeat.sequence ? usesIn(step.repeat.sequence, `${here}.repeat.sequence`) : []
    return []
  })
}

/**
 * Check every `use` of `recipe`, recursively: the used Recipe exists, no
 * cycle, `with:` names only declared args, gives every required one, and a
 * literal value (one without placeholders) has the arg's type. Values made
 * of placeholders are checked when the launch renders them.
 */
export function checkUses(recipe: Recipe, chain: Recipe[] = [recipe]): void {
  const top = recipe.sequence ? 'sequence' : 'parallel'
  for (const {field, step} of usesIn(recipe.sequence ?? recipe.parallel ?? [], top)) {
    const used = findUsedRecipe(step.use, recipe, `${field}.use`)
    refuseUseCycle(chain, used, `${field}.use`)
    checkWith(recipe, used, step, `${field}.with`)
    checkUses(used, [...chain, used])
  }
}

function checkWith(recipe: Recipe, used: Recipe, step: UseStep, field: string): void {
  const fail = (problem: string, fix: string): ActorsError => recipeError(recipe.file, field, problem, fix)
  const declared = used.args.map((a) => a.name)
  for (const [name, value] of Object.entries(step.with)) {
    const spec = used.args.find((a) => a.name === name)
    if (!spec)
      throw fail(
        `gives "${name}", which Recipe ${used.name} does not declare`,
        `${didYouMean(name, declared)}${declared.length ? `its args: ${used.args.map(formatArgSpec).join(', ')}` : 'it takes no args'}`,
      )
    const values = Array.isArray(value) ? value : [value]
    if (values.length > 1 && spec.type !== 'array')
      throw fail(`gives several values for "${name}" (${formatArgSpec(spec)})`, `give ${name} one value`)
    for (const v of values) {
      if (placeholdersOf(v).length > 0) continue
      try {
        convertArgValue(spec, v, dirname(recipe.file))
      } catch (error) {
        if (error instanceof InputProblem)
          throw fail(`arg "${name}" of Recipe ${used.name} (${formatArgSpec(spec)}): ${error.message}`, error.fix)
        throw error
      }
    }
  }
  const missing = used.args.find((a) => !('default' in a) && !(a.name in step.with))
  if (missing)
    throw fail(
      `does not give "${missing.name}", which Recipe ${used.name} requires`,
      `add ${missing.name}: VALUE (${formatArgSpec(missing)}) under with:`,
    )
}
