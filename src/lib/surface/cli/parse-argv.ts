/**
 * The fast front end's argument parser. It accepts only invocations it can
 * parse exactly as oclif would and returns undefined for anything else
 * (help, unknown or repeated flags, missing values, bad integers, too many or
 * too few arguments, values that look like flags), so that oclif handles those
 * and every error message comes from one place. Being strict costs nothing:
 * a refused invocation is merely slower.
 */
import {
  HOME_FLAG,
  jsonRequested,
  withFlagDefaults,
  type AnyCommandDefinition,
  type FlagDefinition,
  type Invocation,
} from './definition.js'
import {firstIndexOf} from './long-argv.js'

const INTEGER = /^\d{1,15}$/

/** Parse `tokens` (after the command's own normalizeArgv) as oclif would, or return undefined to leave them to oclif. */
export function parseInvocation(
  definition: AnyCommandDefinition,
  given: string[],
  env: NodeJS.ProcessEnv = process.env,
): Invocation | undefined {
  let tokens = given
  try {
    if (definition.normalizeArgv) tokens = definition.normalizeArgv(given)
  } catch {
    return undefined // refused: oclif says why, the same way as for every other bad flag
  }
  const flagDefinitions: Record<string, FlagDefinition> = {...definition.flags, home: HOME_FLAG}
  const flags: Record<string, string | number | boolean | undefined> = {}
  const positional: string[] = []
  let passthrough: string[] | undefined
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i]
    if (token === '--') {
      passthrough = tokens.slice(i + 1)
      break
    }
    if (!token.startsWith('-') || token === '-') {
      positional.push(token)
      continue
    }
    if (token === '--json') {
      if (flags.json) return undefined
      flags.json = true
      continue
    }
    const short = !token.startsWith('--')
    const equals = token.indexOf('=')
    const negated = negatedFlagName(flagDefinitions, token)
    const name =
      negated ?? (short ? shortFlagName(flagDefinitions, token) : token.slice(2, equals === -1 ? undefined : equals))
    // Own properties only: `--constructor` must be an unknown flag, not Object's.
    const flag = name !== undefined && Object.hasOwn(flagDefinitions, name) ? flagDefinitions[name] : undefined
    if (name === undefined || flag === undefined || Object.hasOwn(flags, name)) return undefined
    if (flag.type === 'boolean') {
      if (equals !== -1) return undefined
      flags[name] = negated === undefined
      continue
    }
    if (short) return undefined
    const value = equals === -1 ? tokens[++i] : token.slice(equals + 1)
    // A missing value, or one that looks like a flag (`--home=--json` too): oclif has rules for these; let it apply them.
    if (value === undefined || value.startsWith('-')) return undefined
    if (flag.type === 'integer') {
      if (!INTEGER.test(value)) return undefined
      const number = Number(value)
      if ((flag.min !== undefined && number < flag.min) || (flag.max !== undefined && number > flag.max))
        return undefined
      flags[name] = number
    } else {
      if (flag.options && !flag.options.includes(value)) return undefined
      flags[name] = value
    }
  }
  // A required flag that is missing: oclif's message.
  for (const [name, flag] of Object.entries(flagDefinitions))
    if (flag.type !== 'boolean' && flag.required && !Object.hasOwn(flags, name)) return undefined
  const placed = placeArgs(definition, tokens, positional, passthrough)
  if (!placed) return undefined
  delete flags.json
  return {
    args: placed.args,
    argv: placed.all,
    passthrough,
    flags: withFlagDefaults(definition, flags) as Invocation['flags'],
    json: jsonRequested(tokens, env),
  }
}

/** The command's arguments from the positional words and the passthrough, as oclif places them; undefined to leave them to oclif. */
function placeArgs(
  definition: AnyCommandDefinition,
  tokens: string[],
  positional: string[],
  passthrough: string[] | undefined,
): {args: Record<string, string | undefined>; all: string[]} | undefined {
  const argNames = Object.keys(definition.args)
  const strict = definition.strict !== false
  if (strict && (passthrough !== undefined || positional.length > argNames.length)) return undefined
  const all = [...positional, ...(passthrough ?? [])]
  // oclif sorts its argv by where each word first occurs in the tokens, which reorders repeated
  // words (`wait a b a`) and a `--` inside the passthrough: leave those to it, so results never differ.
  const at = firstIndexOf(tokens)
  if (!all.every((word, i) => i === 0 || at(all[i - 1]) <= at(word))) return undefined
  const args: Record<string, string | undefined> = {}
  for (const [index, name] of argNames.entries()) {
    args[name] = all[index]
    if (definition.args[name].required && args[name] === undefined) return undefined
  }
  return {args, all}
}

/** `--no-NAME` → NAME when NAME is a boolean flag that allows it (and no flag is itself called `no-NAME`). */
function negatedFlagName(flags: Record<string, FlagDefinition>, token: string): string | undefined {
  if (!token.startsWith('--no-') || token.includes('=') || Object.hasOwn(flags, token.slice(2))) return undefined
  const name = token.slice(5)
  const flag = Object.hasOwn(flags, name) ? flags[name] : undefined
  return flag?.type === 'boolean' && flag.allowNo ? name : undefined
}

/** `-f` → the boolean flag with that char; combined (`-fv`) or unknown shorts are left to oclif. */
function shortFlagName(flags: Record<string, FlagDefinition>, token: string): string | undefined {
  if (token.length !== 2) return undefined
  return Object.entries(flags).find(([, flag]) => flag.type === 'boolean' && flag.char === token[1])?.[0]
}
