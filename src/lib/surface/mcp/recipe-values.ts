/**
 * Recipe values from an MCP call as the CLI's NAME=VALUE words. A tool's
 * `values` take strings, numbers, booleans and lists, but a list only fits an
 * arg of type `array`: given for any other arg it would turn into JSON text
 * (`["a","b"]` as a string), so it is refused, naming the arg and its type.
 */
import {usageError} from '../../base/platform/errors.js'
import type {ArgSpec} from '../../kernel/recipes/types.js'
import {valueText} from './tool.js'

type Value = string | number | boolean | string[]

/** The NAME=VALUE words for `values`, checked against the Recipe's declared `args` (undeclared names are the launch's to refuse). */
export function recipeValueWords(
  recipe: {name: string; args: ArgSpec[]},
  values: Record<string, Value> | undefined,
): string[] {
  return Object.entries(values ?? {}).map(([name, value]) => {
    const spec = recipe.args.find((arg) => arg.name === name)
    if (Array.isArray(value) && spec && spec.type !== 'array') {
      const type = typeof spec.type === 'string' ? spec.type : `enum(${spec.type.enum.join(',')})`
      throw usageError(
        `values.${name}: a list was given, but arg ${name} of Recipe ${recipe.name} is of type ${type}`,
        `give ${name} one value (only args of type array take a list)`,
      )
    }
    return `${name}=${valueText(value)}`
  })
}
