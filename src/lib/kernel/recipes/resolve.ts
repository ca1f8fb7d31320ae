/**
 * Binding command-line values to a Recipe and rendering every template, so a
 * launch gets a finished plan: argv lists, cwd, env, artifacts, limits. All
 * value problems are refused here (exit 2) before anything starts.
 */
import {normaliseRecipeLimits} from '../containment/limits.js'
import {dirname, resolve} from 'node:path'
import {InputProblem} from '../../base/platform/errors.js'
import {parseDuration} from '../../base/platform/duration.js'
import {convertArgValue, formatArgSpec, resolvePath} from './args.js'
import {didYouMean} from '../../base/platform/did-you-mean.js'
import {recipeError} from './load.js'
import {renderPlan} from './plan.js'
import {renderString} from './template.js'
import type {Recipe, ResolvedRecipe, RuntimeValues} from './types.js'
import {renderRecipeLocks} from './locks-field.js'
import {DEFAULT_KILL_GRACE_MS} from '../../base/records/run.js'

/** Split `NAME=VALUE` words into a map, refusing malformed or repeated ones (arrays may repeat to append). */
function parseAssignments(recipe: Recipe, assignments: string[]): Map<string, string[]> {
  const given = new Map<string, string[]>()
  const names = recipe.args.map((a) => a.name)
  for (const word of assignments) {
    const eq = word.indexOf('=')
    if (eq <= 0) {
      throw recipeError(
        recipe.file,
        null,
        `argument ${JSON.stringify(word)} is not NAME=VALUE`,
        names.length
          ? `pass values as NAME=VALUE; this Recipe takes: ${recipe.args.map(formatArgSpec).join(', ')}`
          : 'this Recipe takes no args',
      )
    }
    const name = word.slice(0, eq)
    const spec = recipe.args.find((a) => a.name === name)
    if (!spec) {
      const fix = names.length
        ? `${didYouMean(name, names)}declared args: ${recipe.args.map(formatArgSpec).join(', ')}`
        : 'this Recipe declares no args; drop the value'
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

/** Type-check and default the values of one Recipe (the launched one, or one a `use` step imports). */
function bindValues(
  recipe: Recipe,
  assignments: string[],
  callerCwd: string,
  previous?: Record<string, unknown>,
): Record<string, unknown> {
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
        throw recipeError(
          recipe.file,
          null,
          `arg "${spec.name}" is required by Recipe ${recipe.name}`,
          `pass ${spec.name}=VALUE (${formatArgSpec(spec)})`,
        )
      }
    } catch (error) {
      if (error instanceof InputProblem) {
        throw recipeError(recipe.file, null, `arg "${spec.name}" (${formatArgSpec(spec)}): ${error.message}`, error.fix)
      }
      throw error
    }
  }
  return values
}

/**
 * Resolve `recipe` for one launch: type-check and default the values, then
 * render the plan per argv word (no shell ever sees a value). Relative
 * `path` values and a relative `cwd` resolve against the caller's cwd
 * (`runtime.cwd`, default `process.cwd()`).
 */
export function resolveRecipe(
  recipe: Recipe,
  assignments: string[],
  runtime: RuntimeValues,
  previous?: Record<string, unknown>,
): ResolvedRecipe {
  const callerCwd = runtime.cwd ?? process.cwd()
  const values = bindValues(recipe, assignments, callerCwd, previous)

  const scope = {...values, run_id: runtime.run_id, state_dir: runtime.state_dir, recipe_dir: dirname(recipe.file)}
  // Templates, and `repeat`/`use` steps rendered whole before start (plan.ts); a used Recipe's values bind like a launch's.
  const bindUsed = (used: Recipe, given: string[]) => ({
    ...bindValues(used, given, callerCwd),
    run_id: runtime.run_id,
    state_dir: runtime.state_dir,
    recipe_dir: dirname(used.file),
  })
  const plan = renderPlan(recipe, scope, bindUsed)

  const resolved: ResolvedRecipe = {
    values,
    plan,
    env: Object.fromEntries(Object.entries(recipe.env ?? {}).map(([k, v]) => [k, renderString(v, scope)])),
    retry: recipe.retry ?? 1,
    killGraceMs:
      recipe.kill_grace !== undefined ? parseDuration(recipe.kill_grace, 'kill_grace') : DEFAULT_KILL_GRACE_MS,
    control: [...recipe.control],
    singleton: recipe.singleton,
    notification: recipe.notification,
    ...(recipe.inbox ? {inbox: recipe.inbox} : {}),
    ...(recipe.resume === false ? {resume: false} : {}),
  }
  if (recipe.locks?.length)
    resolved.locks = renderRecipeLocks(recipe, scope, (field, problem, fix) =>
      recipeError(recipe.file, field, problem, fix),
    ) // [locks]
  if (recipe.cwd !== undefined) resolved.cwd = resolve(callerCwd, renderString(recipe.cwd, scope))
  if (recipe.executor) resolved.executor = recipe.executor
  if (recipe.limits) resolved.limits = normaliseRecipeLimits(recipe.limits) // [containment]
  if (recipe.timeout !== undefined) resolved.timeoutMs = parseDuration(recipe.timeout, 'timeout')
  if (recipe.artifacts) {
    resolved.artifacts = Object.fromEntries(
      Object.entries(recipe.artifacts).map(([k, v]) => [k, renderString(v, scope)]),
    )
  }
  return resolved
}
