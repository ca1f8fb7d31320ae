/**
 * Ad-hoc Runs (`actors run -- COMMAND ARG...`): the argv is taken exactly as
 * given (never through a shell) and launched with the same defaults a Recipe
 * gets.
 */
import {usageError} from '../../base/platform/errors.js'
import type {ResolvedRecipe} from '../../kernel/recipes/types.js'
import {DEFAULT_KILL_GRACE_MS} from '../../base/records/run.js'

export function resolveAdHoc(argv: string[]): ResolvedRecipe {
  if (argv.length === 0 || argv[0] === '') {
    throw usageError('no command given after --', 'e.g. actors run -- make test')
  }
  return {
    values: {},
    plan: {mode: 'single', steps: [argv]},
    env: {},
    retry: 1,
    killGraceMs: DEFAULT_KILL_GRACE_MS,
    control: [],
    singleton: false,
    notification: 'normal',
  }
}
