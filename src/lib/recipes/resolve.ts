/**
 * Binding command-line values to a Recipe and rendering every template, so a
 * launch gets a finished plan: argv lists, cwd, env, artifacts, limits. All
 * value problems are refused here (exit 2) before anything starts.
 */
import {normaliseRecipeLimits} from '../executors/containment/limits.js'
import {dirname, resolve} from 'node:path'
import {InputProblem} from '../platform/errors.js'
import {parseDuration} from '../platform/duration.js'
import {convertArgValue, formatArgSpec, resolvePath} from './args.js'
import {didYouMean} from './did-you-mean.js'
import {recipeError, templateWords} from './load.js'
import {renderString, renderWord} from './template.js'
import type {Recipe, ResolvedRecipe, RuntimeValues} from './types.js'
import {renderRecipeLocks} from '../locks/recipe-field.js'
import {DEFAULT_KILL_GRACE_MS} from '../runs/types.js'

/** Split `NAME=VALUE` words into a map, refusing malformed or repeated ones (arrays may repeat to append). */
function parseAssignments(recipe: Recipe, assignments: string[]): Map<string, string[]> {
  const given = new Map<string, string[]>()
  const names = recipe.args.map((a) => a.name)
  for (const word of assignments) {
    const eq = word.indexOf('=')
    if (eq <= 0) {
      throw recipeError(recipe.file, null, `argument ${JSON.stringify(word)} is not NAME=VALUE`, names.length ? `pass values as NAME=VALUE; this Recipe takes: ${recipe.args.map(formatArgSpec).join(', ')}` : 'this Recipe takes no args')
    }
    const name = word.slice(0, eq)
    const spec = recipe.args.find((a) => a.name === name)
    if (!spec) {
      const fix = names.length ? `${didYouMean(name, names)}declared args: ${recipe.args.map(formatArgSpec).join(', ')}` : 'this Recipe declares no args; drop the value'
      throw recipeError(recipe.file, null, `arg "${name}" is not declared by Recipe ${recipe.name}`, fix)
    }
    const list = given.get(name) ?? []
    if (list.length > 0 && spec.type !== 'array') {
      throw recipeError(recipe.file, null, `arg "${name}" is given twice`, `pass ${name}=VALUE once`)
    }
    list.push(word.slice(eq + 1))
    given.set(name, list)
  }
  return given
}

/**
 * Resolve `recipe` for one launch: type-check and default the values, then
 * render the plan per argv word (no shell ever sees a value). Relative
 * `path` values and a relative `cwd` resolve against the caller's cwd
 * (`runtime.cwd`, default `process.cwd()`).
 */
export function resolveRecipe(recipe: Recipe, assignments: string[], runtime: RuntimeValues, previous?: Record<string, unknown>): ResolvedRecipe {
  const callerCwd = runtime.cwd ?? process.cwd()
  const given = parseAssignments(recipe, assignments)
  const values: Record<string, unknown> = {}
  for (const spec of recipe.args) {
    const raws = given.get(spec.name)
    try {
      if (raws !== undefined) {
        const converted = raws.map((raw) => convertArgValue(spec, raw, callerCwd))
        values[spec.name] = spec.type === 'array' ? converted.flat() : converted[0]
      } else if (previous && spec.name in previous) {
        // `actors rerun`: a value not given again keeps the earlier generation's (already converted) value.
        values[spec.name] = previous[spec.name]
      } else if ('default' in spec) {
        values[spec.name] = spec.type === 'path' ? resolvePath(String(spec.default), callerCwd) : spec.default
      } else {
        throw recipeError(recipe.file, null, `arg "${spec.name}" is required by Recipe ${recipe.name}`, `pass ${spec.name}=VALUE (${formatArgSpec(spec)})`)
      }
    } catch (error) {
      if (error instanceof InputProblem) {
        throw recipeError(recipe.file, null, `arg "${spec.name}" (${formatArgSpec(spec)}): ${error.message}`, error.fix)
      }
      throw error
    }
  }

  const scope = {...values, run_id: runtime.run_id, state_dir: runtime.state_dir, recipe_dir: dirname(recipe.file)}
  const renderArgv = (template: string[] | string) => templateWords(template).flatMap((w) => renderWord(w, scope))
  const plan: ResolvedRecipe['plan'] =
    recipe.template !== undefined
      ? {mode: 'single', steps: [renderArgv(recipe.template)]}
      : recipe.sequence
        ? {mode: 'sequence', steps: recipe.sequence.map(renderArgv)}
        : {mode: 'parallel', steps: (recipe.parallel ?? []).map(renderArgv)}
  plan.steps.forEach((argv, i) => {
    if (argv.length === 0 || argv[0] === '') {
      const field = plan.mode === 'single' ? 'template' : `${plan.mode}[${i}]`
      throw recipeError(recipe.file, field, 'renders to an empty command', 'give the command a non-empty first word (an empty array arg cannot be the whole command)')
    }
  })

  const resolved: ResolvedRecipe = {
    values,
    plan,
    env: Object.fromEntries(Object.entries(recipe.env ?? {}).map(([k, v]) => [k, renderString(v, scope)])),
    retry: recipe.retry ?? 1,
    killGraceMs: recipe.kill_grace !== undefined ? parseDuration(recipe.kill_grace, 'kill_grace') : DEFAULT_KILL_GRACE_MS,
    control: [...recipe.control],
    singleton: recipe.singleton,
    notification: recipe.notification,
    ...(recipe.inbox ? {inbox: recipe.inbox} : {}),
    ...(recipe.resume === false ? {resume: false} : {}),
  }
  if (recipe.locks?.length) resolved.locks = renderRecipeLocks(recipe, scope, (field, problem, fix) => recipeError(recipe.file, field, problem, fix)) // [locks]
  if (recipe.cwd !== undefined) resolved.cwd = resolve(callerCwd, renderString(recipe.cwd, scope))
  if (recipe.executor) resolved.executor = recipe.executor
  if (recipe.limits) resolved.limits = normaliseRecipeLimits(recipe.limits) // [containment]
  if (recipe.timeout !== undefined) resolved.timeoutMs = parseDuration(recipe.timeout, 'timeout')
  if (recipe.artifacts) {
    resolved.artifacts = Object.fromEntries(Object.entries(recipe.artifacts).map(([k, v]) => [k, renderString(v, scope)]))
  }
  return resolved
}
