/**
 * Values never become options unless the Recipe says so (SPEC: Recipes). A
 * `string` or `array` value that begins an argv word and starts with "-"
 * would be read as an option by the command it is placed into: `fanout`'s
 * `recipe=--silent` turned its inner `actors run RECIPE` into `actors run
 * --silent -- CMD`. Such a value is refused (exit 2) unless its arg is listed
 * under the Recipe's `option_args`. Numbers may be negative (their text is
 * only digits after the sign); enum values are the Recipe's own words; paths
 * are absolute once resolved.
 */
import type {ActorsError} from '../../base/platform/errors.js'
import {templateWords, type Template} from './steps.js'
import {leadingValues} from './template.js'
import type {Recipe} from './types.js'

type Fail = (field: string, problem: string, fix: string) => ActorsError

/**
 * Refuse (through `fail`: exit 2, naming the arg and the value) a value that
 * would begin an argv word of `template` with "-" when `recipe` does not allow it.
 */
export function refuseOptionValues(
  template: Template,
  scope: Record<string, unknown>,
  recipe: Recipe,
  path: string,
  fail: Fail,
): void {
  const guarded = new Set(
    recipe.args
      .filter((arg) => (arg.type === 'string' || arg.type === 'array') && !recipe.option_args?.includes(arg.name))
      .map((arg) => arg.name),
  )
  if (guarded.size === 0) return
  const words = templateWords(template)
  for (const word of words) {
    for (const {name, text} of leadingValues(word, scope)) {
      if (!guarded.has(name) || !text.startsWith('-')) continue
      throw fail(
        path,
        `arg "${name}" has the value ${JSON.stringify(text)}: it starts with "-", so the command (${JSON.stringify(words[0])}) could read it as an option`,
        `give ${name} a value that does not start with "-" (a Recipe whose ${name} may be an option lists it under option_args)`,
      )
    }
  }
}
