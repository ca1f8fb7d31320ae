/**
 * What the user asked to launch, as a PreparedLaunch: a Recipe found under the
 * recipe roots with its NAME=VALUE words, or an ad-hoc argv. Shared by
 * `actors run` and the MCP `run` tool, so both launch exactly the same way.
 */
import {resolveAdHoc} from './ad-hoc.js'
import {usageError} from '../platform/errors.js'
import {parseDuration} from '../platform/duration.js'
import {limitFlags} from '../executors/containment/limits.js'
import {findRecipe, recipeRoots, resolveRecipe, type Recipe} from '../recipes/index.js'
import type {LaunchOverrides, PreparedLaunch} from './run-launcher.js'

/** An ad-hoc command (`actors run -- COMMAND ARG...`): the argv exactly as given. */
export function prepareAdHoc(command: string[]): PreparedLaunch {
  return {idHint: command[0] ?? 'run', recipe: null, recipeFile: null, resolve: () => resolveAdHoc(command)}
}

/** Find Recipe `name` (or a path to a Recipe file) under the roots of `home` (and `--recipes`). */
export function findLaunchRecipe(home: string, name: string, recipesFlag?: string): Recipe {
  return findRecipe(name, recipeRoots({recipesFlag, home}))
}

/** A found Recipe with its `NAME=VALUE` words (validated when the Run id is known). */
export function prepareRecipe(recipe: Recipe, values: string[]): PreparedLaunch {
  return {idHint: recipe.name, recipe: recipe.name, recipeFile: recipe.file, resolve: (runtime) => resolveRecipe(recipe, values, runtime)}
}

/** The command-line overrides of a launch, from `run`'s flags (durations as text, e.g. `10m`). */
export function launchOverrides(flags: {
  name?: string
  cwd?: string
  timeout?: string
  retry?: number
  silent?: boolean
  'max-parallel'?: number
  'budget-tokens'?: number
  on?: string
  inbox?: string
  memory?: string
  cpus?: string
  pids?: number
}): LaunchOverrides {
  return {
    name: flags.name,
    cwd: flags.cwd,
    timeoutMs: flags.timeout === undefined ? undefined : parseDuration(flags.timeout, '--timeout'),
    retry: flags.retry,
    silent: flags.silent,
    maxParallel: flags['max-parallel'],
    budgetTokens: flags['budget-tokens'],
    on: flags.on,
    inbox: parseInboxFlag(flags.inbox),
    limits: limitFlags(flags), // [containment]
  }
}

/** `--inbox stdin|file` (SPEC: Generations and steering); anything else is a usage error. */
function parseInboxFlag(value: string | undefined): 'stdin' | 'file' | undefined {
  if (value === undefined || value === 'stdin' || value === 'file') return value
  throw usageError(`--inbox ${JSON.stringify(value)} is not stdin or file`, '--inbox stdin (messages arrive as lines on stdin) or --inbox file (read them with `actors inbox`)')
}
