/**
 * Loading one Recipe file: parse YAML or JSON, then validate every field so
 * bad input is refused before anything starts, always naming the file, the
 * field and a fix (exit 2).
 */
import {readFileSync, statSync} from 'node:fs'
import {basename, extname, isAbsolute, relative, sep} from 'node:path'
import {InputProblem, usageError, type ActorsError} from '../platform/errors.js'
import {parseDuration} from '../platform/duration.js'
import {parseArgSpec, RUNTIME_NAMES} from './args.js'
import {didYouMean} from '../platform/did-you-mean.js'
import {readStepList, readTemplate, stepTemplates, templateWords} from './steps.js'
import {placeholdersOf} from './template.js'
import {yamlLibrary} from './yaml.js'
import type {ArgSpec, Recipe} from './types.js'
import {isActionName, RUNTIME_ACTIONS} from '../records/actions.js'
import {readRecipeLocks} from './locks-field.js'
import {readOptionArgs} from './option-args.js'
import {readRecipeExecutor} from '../executors/index.js'
import {readRecipeLimits} from '../containment/limits.js'

export const RECIPE_EXTENSIONS = ['.yaml', '.yml', '.json'] as const
export const MAX_RECIPE_BYTES = 256 * 1024
export const RECIPE_FIELDS = [
  'description',
  'args',
  'template',
  'sequence',
  'parallel',
  'timeout',
  'retry',
  'kill_grace',
  'cwd',
  'env',
  'control',
  'artifacts',
  'singleton',
  'notification',
  'locks',
  'executor',
  'inbox',
  'resume',
  'limits',
  'option_args',
] as const
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/
const ARTIFACT_NAME = /^[A-Za-z0-9_.-]+$/

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
      `write fields such as template: and description: at the top level (allowed: ${RECIPE_FIELDS.join(', ')})`,
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
 * Load and fully validate a Recipe file found below `root`. Everything a
 * launch needs to trust is checked here, including that every placeholder
 * names a declared arg or a runtime value.
 */
export function loadRecipeFile(file: string, root: string): Recipe {
  const data = parseRecipeText(file)
  const fail = (field: string, problem: string, fix: string) => recipeError(file, field, problem, fix)

  for (const key of Object.keys(data)) {
    if (!(RECIPE_FIELDS as readonly string[]).includes(key)) {
      throw fail(key, 'is not a Recipe field', `${didYouMean(key, RECIPE_FIELDS)}allowed: ${RECIPE_FIELDS.join(', ')}`)
    }
  }

  const recipe: Recipe = {
    name: recipeNameOf(file, root),
    file,
    root,
    description: '',
    args: [],
    control: [],
    singleton: false,
    notification: 'normal',
  }

  if (data.description !== undefined) {
    if (typeof data.description !== 'string') throw fail('description', 'is not a string', 'write one line of text')
    recipe.description = data.description.trim()
  }

  recipe.args = readArgs(data.args, fail)
  if (data.option_args !== undefined) recipe.option_args = readOptionArgs(data.option_args, recipe.args, fail)

  const kinds = (['template', 'sequence', 'parallel'] as const).filter((k) => data[k] !== undefined)
  if (kinds.length === 0)
    throw fail('template', 'is missing', 'give exactly one of template, sequence or parallel (template: echo hello)')
  if (kinds.length > 1)
    throw fail(kinds[1], `cannot be combined with "${kinds[0]}"`, 'give exactly one of template, sequence or parallel')
  const kind = kinds[0]
  if (kind === 'template') {
    recipe.template = readTemplate(data.template, 'template', fail)
  } else {
    recipe[kind] = readStepList(data[kind], kind, fail) // templates, repeat and use steps (steps.ts)
  }

  readLimits(data, recipe, fail)
  readPlace(data, recipe, fail)
  readControl(data, recipe, fail)
  readFlags(data, recipe, fail)

  if (data.locks !== undefined) recipe.locks = readRecipeLocks(data.locks, fail) // [locks] SPEC: Resource locks
  // Executors: each kind validates its own options (executors/choice.ts).
  if (data.executor !== undefined) recipe.executor = readRecipeExecutor(data.executor, fail)
  // [containment] memory, cpu, pids: validated in containment/limits.ts.
  if (data.limits !== undefined) recipe.limits = readRecipeLimits(data.limits, fail)

  readSteering(data, recipe, fail)
  checkPlaceholders(recipe, fail)
  return recipe
}

/** `timeout`, `kill_grace` (durations) and `retry` (attempts, 1 to 100): how long and how often the Run goes. */
function readLimits(data: Record<string, unknown>, recipe: Recipe, fail: Fail): void {
  for (const field of ['timeout', 'kill_grace'] as const) {
    const value = data[field]
    if (value === undefined) continue
    if (typeof value !== 'string' && typeof value !== 'number')
      throw fail(field, 'is not a duration', 'use 500ms, 30s, 5m, 1h or a number of seconds')
    try {
      parseDuration(value, field)
    } catch (error) {
      throw fail(
        field,
        `${JSON.stringify(value)} is not a valid duration`,
        (error as ActorsError).fix ?? 'use 500ms, 30s, 5m, 1h',
      )
    }
    recipe[field] = value
  }

  if (data.retry !== undefined) {
    // The same bound as `actors run --retry`.
    if (typeof data.retry !== 'number' || !Number.isInteger(data.retry) || data.retry < 1 || data.retry > 100) {
      throw fail(
        'retry',
        `${JSON.stringify(data.retry)} is not a whole number of attempts from 1 to 100`,
        'give the total number of attempts, e.g. retry: 3 (1 means no retry)',
      )
    }
    recipe.retry = data.retry
  }
}

/** `cwd`, `env` and `artifacts`: where the Run works and what it names. */
function readPlace(data: Record<string, unknown>, recipe: Recipe, fail: Fail): void {
  if (data.cwd !== undefined) {
    if (typeof data.cwd !== 'string' || data.cwd === '')
      throw fail('cwd', 'is not a non-empty string', 'give a directory, e.g. cwd: "{recipe_dir}"')
    recipe.cwd = data.cwd
  }

  if (data.env !== undefined)
    recipe.env = readStringMap(data.env, 'env', ENV_NAME, 'an environment variable name (letters, digits, "_")', fail)
  if (data.artifacts !== undefined)
    recipe.artifacts = readStringMap(
      data.artifacts,
      'artifacts',
      ARTIFACT_NAME,
      'an artifact name (letters, digits, "_", "." and "-")',
      fail,
    )
}

/** `control`: the actions the Run declares (any but kill, each once). */
function readControl(data: Record<string, unknown>, recipe: Recipe, fail: Fail): void {
  if (data.control !== undefined) {
    if (!Array.isArray(data.control))
      throw fail('control', 'is not a list of action names', 'write control: [next, prev]')
    for (const action of data.control) {
      if (typeof action !== 'string' || !isActionName(action)) {
        throw fail(
          'control',
          `action ${JSON.stringify(action)} is not a valid name`,
          'use lowercase letters, digits, "_" and "-", starting with a letter (at most 64 characters)',
        )
      }
      // A Recipe may take over pause/resume/stop/status (its service handles them, SPEC: Control); kill is always the kernel's.
      if (action === 'kill') {
        throw fail(
          'control',
          'action "kill" is always the kernel\'s',
          `drop it; a service may declare ${RUNTIME_ACTIONS.filter((a) => a !== 'kill').join(', ')} to handle them itself`,
        )
      }
    }
    if (new Set(data.control).size !== data.control.length)
      throw fail('control', 'lists an action twice', 'list each action once')
    recipe.control = data.control as string[]
  }
}

/** `singleton` and `notification`: at most one live Run, and whether its end is reported. */
function readFlags(data: Record<string, unknown>, recipe: Recipe, fail: Fail): void {
  if (data.singleton !== undefined) {
    if (typeof data.singleton !== 'boolean')
      throw fail(
        'singleton',
        `${JSON.stringify(data.singleton)} is not true or false`,
        'write singleton: true or singleton: false',
      )
    recipe.singleton = data.singleton
  }

  if (data.notification !== undefined) {
    if (data.notification !== 'normal' && data.notification !== 'silent') {
      throw fail(
        'notification',
        `${JSON.stringify(data.notification)} is not normal or silent`,
        'write notification: normal or notification: silent',
      )
    }
    recipe.notification = data.notification
  }
}

/** `inbox` (stdin | file) and `resume` (bool): how `actors send` reaches the Run (SPEC: Generations and steering). */
function readSteering(data: Record<string, unknown>, recipe: Recipe, fail: Fail): void {
  if (data.inbox !== undefined) {
    if (data.inbox !== 'stdin' && data.inbox !== 'file')
      throw fail(
        'inbox',
        `${JSON.stringify(data.inbox)} is not stdin or file`,
        'write inbox: stdin (messages arrive as lines on stdin) or inbox: file (read them with `actors inbox`)',
      )
    recipe.inbox = data.inbox
  }
  if (data.resume !== undefined) {
    if (typeof data.resume !== 'boolean')
      throw fail(
        'resume',
        `${JSON.stringify(data.resume)} is not true or false`,
        'write resume: false to refuse resuming a finished Run with `actors send`',
      )
    recipe.resume = data.resume
  }
}

type Fail = (field: string, problem: string, fix: string) => ActorsError

function readArgs(value: unknown, fail: Fail): ArgSpec[] {
  if (value === undefined || value === null) return []
  if (!Array.isArray(value)) throw fail('args', 'is not a list', 'write args: ["name", "count:int=1"]')
  const specs: ArgSpec[] = []
  for (const entry of value) {
    try {
      specs.push(parseArgSpec(entry))
    } catch (error) {
      if (error instanceof InputProblem) throw fail('args', error.message, error.fix)
      throw error
    }
    const name = specs.at(-1)!.name
    if (specs.filter((s) => s.name === name).length > 1)
      throw fail('args', `declares "${name}" twice`, 'declare each arg once')
  }
  return specs
}

function readStringMap(
  value: unknown,
  field: string,
  keyPattern: RegExp,
  keyWhat: string,
  fail: Fail,
): Record<string, string> {
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw fail(field, 'is not a mapping of names to strings', `write ${field}: {NAME: value}`)
  const out: Record<string, string> = {}
  for (const [key, v] of Object.entries(value)) {
    if (!keyPattern.test(key)) throw fail(field, `key "${key}" is not ${keyWhat}`, `rename "${key}"`)
    if (typeof v === 'string') out[key] = v
    else if (typeof v === 'number' || typeof v === 'boolean') out[key] = String(v)
    else throw fail(field, `value of "${key}" is not a string`, `quote it: ${key}: "..."`)
  }
  return out
}

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
