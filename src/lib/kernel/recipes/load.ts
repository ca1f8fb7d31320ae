/**
 * Loading one Recipe file: parse YAML or JSON, then validate every field so
 * bad input is refused before anything starts, always naming the file, the
 * field and a fix (exit 2).
 */
import {readFileSync, statSync} from 'node:fs'
import {basename, extname, isAbsolute, relative, sep} from 'node:path'
import {usageError, type ActorsError} from '../../base/platform/errors.js'
import {RUNTIME_NAMES} from './args.js'
import {didYouMean} from '../../base/platform/did-you-mean.js'
import {stepTemplates, templateWords} from './steps.js'
import {placeholdersOf} from './template.js'
import {yamlLibrary} from './yaml.js'
import type {Recipe} from './types.js'
import {recipeFields, recipeFileSchema} from './schema.js'
import {fieldName, recipeIssue} from '../../base/platform/zod-issues.js'

export const RECIPE_EXTENSIONS = ['.yaml', '.yml', '.json'] as const
export const MAX_RECIPE_BYTES = 256 * 1024

/** How a file is named in messages: relative to the cwd when below it, else absolute. */
export function displayPath(file: string): string {
  const rel = relative(process.cwd(), file)
  return rel && !rel.startsWith('..') && !isAbsolute(rel) ? rel : file
}

/** The error every validation failure becomes: file, field, problem, fix. */
export function recipeError(file: string, field: string | null, problem: string, fix: string): ActorsError {
  const where = field ? `field "${field}" ` : ''
  return usageError(`${displayPath(file)}: ${where}${problem}`, fix, {file, ...(field ? {field} : {})})
}

/** Read and parse the file into a plain object, refusing oversized or malformed files. */
function parseRecipeText(file: string): Record<string, unknown> {
  let size: number
  try {
    const stat = statSync(file)
    if (!stat.isFile()) throw recipeError(file, null, 'is not a file', 'pass a .yaml, .yml or .json Recipe file')
    size = stat.size
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT')
      throw recipeError(file, null, 'does not exist', 'check the path, or list Recipes with `actors recipes`')
    throw error
  }
  if (size > MAX_RECIPE_BYTES) {
    throw recipeError(
      file,
      null,
      `is ${size} bytes, over the ${MAX_RECIPE_BYTES}-byte limit for a Recipe`,
      'keep Recipes small; move data into files the Recipe reads',
    )
  }
  const text = readFileSync(file, 'utf8')
  let data: unknown
  if (extname(file) === '.json') {
    try {
      data = JSON.parse(text)
    } catch (error) {
      throw recipeError(
        file,
        null,
        `is not valid JSON: ${(error as Error).message}`,
        'fix the JSON syntax (a linter such as `jq . FILE` shows where)',
      )
    }
  } else {
    const doc = yamlLibrary().parseDocument(text, {uniqueKeys: true, prettyErrors: true})
    if (doc.errors.length > 0) {
      const first = doc.errors[0].message.split('\n')[0].replace(/:$/, '')
      throw recipeError(
        file,
        null,
        `is not valid YAML: ${first}`,
        'fix the YAML syntax; quote strings that contain ": ", "{" or "#"',
      )
    }
    try {
      data = doc.toJS({maxAliasCount: 100})
    } catch (error) {
      // The yaml library refuses alias expansion past maxAliasCount (a "billion laughs" file).
      throw recipeError(
        file,
        null,
        `is not a usable YAML document: ${(error as Error).message} (too many YAML aliases)`,
        'write the values out instead of repeating anchors (*name) many times',
      )
    }
  }
  if (data === null || typeof data !== 'object' || Array.isArray(data)) {
    throw recipeError(
      file,
      null,
      'is not a mapping of Recipe fields',
      `write fields such as template: and description: at the top level (allowed: ${recipeFields().join(', ')})`,
    )
  }
  return data as Record<string, unknown>
}

/** A Recipe's identity: its path below the root without extension, always with `/`. */
export function recipeNameOf(file: string, root: string): string {
  const rel = relative(root, file)
  const name = rel && !rel.startsWith('..') && !isAbsolute(rel) ? rel : basename(file)
  return name
    .slice(0, name.length - extname(name).length)
    .split(sep)
    .join('/')
}

/**
 * Load and fully validate a Recipe file found below `root` (the fields: schema.ts). Everything a
 * launch needs to trust is checked here, including that every placeholder names a declared arg or
 * a runtime value.
 */
export function loadRecipeFile(file: string, root: string): Recipe {
  const data = parseRecipeText(file)
  const fail = (field: string, problem: string, fix: string) => recipeError(file, field, problem, fix)
  const parsed = recipeFileSchema(Object.keys(data)).safeParse(data)
  if (!parsed.success) {
    // An unknown field is named first: the rest of the file may be a typo's consequence.
    const issues = parsed.error.issues
    const first = issues.find((i) => i.code === 'unrecognized_keys' && i.path.length === 0) ?? issues[0]
    const {field, problem, fix, at} = recipeIssue(first)
    throw fail(field ?? fieldName(at), problem, fix)
  }
  const recipe = {
    name: recipeNameOf(file, root),
    file,
    root,
    description: '',
    args: [],
    control: [],
    singleton: false,
    notification: 'normal',
    ...(parsed.data as Partial<Recipe>),
  } as Recipe
  recipe.args ??= []
  checkPlaceholders(recipe, fail)
  return recipe
}

type Fail = (field: string, problem: string, fix: string) => ActorsError

export {templateWords} from './steps.js'

function checkPlaceholders(recipe: Recipe, fail: Fail): void {
  const known = [...recipe.args.map((a) => a.name), ...RUNTIME_NAMES]
  const check = (field: string, text: string, inRepeat = false) => {
    let names: string[]
    try {
      names = placeholdersOf(text)
    } catch (error) {
      throw fail(field, (error as Error).message, 'write {{ and }} for literal braces; placeholders look like {name}')
    }
    for (const name of names) {
      if (!known.includes(name) && !(inRepeat && name === 'iteration')) {
        const hint = name === 'iteration' ? '{iteration} is known only inside a repeat body; ' : ''
        throw fail(
          field,
          `uses unknown placeholder {${name}}`,
          `${hint}${didYouMean(name, known)}declare it under args, or use one of: ${known.join(', ')}`,
        )
      }
    }
  }
  const templates =
    recipe.template !== undefined
      ? [{field: 'template', template: recipe.template, inRepeat: false}]
      : stepTemplates(recipe.sequence ?? recipe.parallel ?? [], recipe.sequence ? 'sequence' : 'parallel', false)
  for (const {field, template, inRepeat} of templates)
    for (const word of templateWords(template)) check(field, word, inRepeat)
  if (recipe.cwd !== undefined) check('cwd', recipe.cwd)
  for (const [key, v] of Object.entries(recipe.env ?? {})) check(`env.${key}`, v)
  for (const [key, v] of Object.entries(recipe.artifacts ?? {})) check(`artifacts.${key}`, v)
  for (const [i, lock] of (recipe.locks ?? []).entries()) check(`locks[${i}]`, lock.name)
}
