/**
 * The fast front end's argument parser. It accepts only invocations it can
 * parse exactly as oclif would and returns undefined for anything else
 * (help, unknown or repeated flags, missing values, bad integers, too many or
 * too few arguments, values that look like flags), so that oclif handles those
 * and every error message comes from one place. Being strict costs nothing:
 * a refused invocation is merely slower.
 */
import {HOME_FLAG, jsonRequested, withBooleanDefaults, type AnyCommandDefinition, type FlagDefinition, type Invocation} from './definition.js'

const INTEGER = /^\d{1,15}$/

export function parseInvocation(definition: AnyCommandDefinition, tokens: string[], env: NodeJS.ProcessEnv = process.env): Invocation | undefined {
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
    const name = short ? shortFlagName(flagDefinitions, token) : token.slice(2, equals === -1 ? undefined : equals)
    // Own properties only: `--constructor` must be an unknown flag, not Object's.
    const flag = name !== undefined && Object.hasOwn(flagDefinitions, name) ? flagDefinitions[name] : undefined
    if (name === undefined || flag === undefined || Object.hasOwn(flags, name)) return undefined
    if (flag.type === 'boolean') {
      if (equals !== -1) return undefined
      flags[name] = true
      continue
    }
    if (short) return undefined
    const value = equals === -1 ? tokens[++i] : token.slice(equals + 1)
    // A missing value, or one that looks like a flag: oclif has rules for these; let it apply them.
    if (value === undefined || (equals === -1 && value.startsWith('-'))) return undefined
    if (flag.type === 'integer') {
      if (!INTEGER.test(value)) return undefined
      const number = Number(value)
      if ((flag.min !== undefined && number < flag.min) || (flag.max !== undefined && number > flag.max)) return undefined
      flags[name] = number
    } else {
      flags[name] = value
    }
  }
  const argNames = Object.keys(definition.args)
  const strict = definition.strict !== false
  if (strict && (passthrough !== undefined || positional.length > argNames.length)) return undefined
  const all = [...positional, ...(passthrough ?? [])]
  const args: Record<string, string | undefined> = {}
  for (const [index, name] of argNames.entries()) {
    args[name] = all[index]
    if (definition.args[name].required && args[name] === undefined) return undefined
  }
  delete flags.json
  return {args, argv: all, passthrough, flags: withBooleanDefaults(definition, flags) as Invocation['flags'], json: jsonRequested(tokens, env)}
}

/** `-f` → the boolean flag with that char; combined (`-fv`) or unknown shorts are left to oclif. */
function shortFlagName(flags: Record<string, FlagDefinition>, token: string): string | undefined {
  if (token.length !== 2) return undefined
  return Object.entries(flags).find(([, flag]) => flag.type === 'boolean' && flag.char === token[1])?.[0]
}
