/**
 * Typed Recipe args: parsing the `name:type=default` declarations and
 * converting command-line strings into typed values. Errors here are plain
 * `InputProblem`s (reason + fix); the caller knows the file and adds it.
 */
import {resolve} from 'node:path'
import {InputProblem} from '../../base/platform/errors.js'
import type {ArgSpec, ArgType} from './types.js'
import {nodeOs} from '../../base/platform/builtins.js'
import {ARG_NAME} from './arg-name.js'

export {ARG_NAME}

export const RUNTIME_NAMES = ['run_id', 'state_dir', 'recipe_dir'] as const
export const TYPE_NAMES = ['string', 'path', 'int', 'number', 'bool', 'array', 'enum(a,b,...)'] as const

/** Parse a type name such as `int` or `enum(fast,slow)`. */
export function parseArgType(text: string): ArgType {
  const t = text.trim()
  const simple = ['string', 'path', 'int', 'number', 'bool', 'array'] as const
  if ((simple as readonly string[]).includes(t)) return t as ArgType
  const m = /^enum\((.*)\)$/.exec(t)
  if (m) {
    const values = m[1].split(',').map((v) => v.trim())
    if (values.length === 0 || values.some((v) => v === '')) {
      throw new InputProblem(`enum type "${t}" has an empty value`, 'list the allowed values, e.g. enum(fast,slow)')
    }
    if (new Set(values).size !== values.length)
      throw new InputProblem(`enum type "${t}" repeats a value`, 'list each value once')
    return {enum: values}
  }
  throw new InputProblem(`unknown arg type "${t}"`, `use one of: ${TYPE_NAMES.join(', ')}`)
}

/** The type as written in a Recipe, for listings and messages. */
export function formatArgType(type: ArgType): string {
  return typeof type === 'string' ? type : `enum(${type.enum.join(',')})`
}

/** A declaration back in its `name:type=default` form. */
export function formatArgSpec(spec: ArgSpec): string {
  let text = `${spec.name}:${formatArgType(spec.type)}`
  if ('default' in spec) text += `=${formatValue(spec.default)}`
  return text
}

/** A typed value as text: how it substitutes into a template word. */
export function formatValue(value: unknown): string {
  if (Array.isArray(value)) return value.join(',')
  return String(value)
}

/**
 * Parse one `args` entry: `name`, `name:type`, `name:type=default` (or the
 * shorthand `name=default` for a string). The default is converted now so a
 * bad default is refused when the file loads, not when someone runs it.
 */
export function parseArgSpec(entry: unknown): ArgSpec {
  if (typeof entry !== 'string') {
    throw new InputProblem(
      `args entry ${JSON.stringify(entry)} is not a string`,
      'write each arg as "name", "name:type" or "name:type=default" (quote it in YAML)',
    )
  }
  const eq = entry.indexOf('=')
  const head = eq === -1 ? entry : entry.slice(0, eq)
  const colon = head.indexOf(':')
  const name = (colon === -1 ? head : head.slice(0, colon)).trim()
  const type = colon === -1 ? 'string' : parseArgType(head.slice(colon + 1))
  if (!ARG_NAME.test(name)) {
    throw new InputProblem(
      `arg name "${name}" is not valid`,
      'use letters, digits and "_", starting with a letter or "_"',
    )
  }
  if ((RUNTIME_NAMES as readonly string[]).includes(name)) {
    throw new InputProblem(
      `arg name "${name}" is reserved for a runtime value`,
      `pick another name (reserved: ${RUNTIME_NAMES.join(', ')})`,
    )
  }
  const spec: ArgSpec = {name, type}
  if (eq !== -1) {
    const raw = entry.slice(eq + 1)
    try {
      // Paths stay as written: they resolve against the caller's cwd at launch.
      const converted = convertArgValue(spec, raw, '/')
      spec.default = type === 'path' ? raw : converted
    } catch (error) {
      if (error instanceof InputProblem) throw new InputProblem(`default of arg "${name}": ${error.message}`, error.fix)
      throw error
    }
  }
  return spec
}

const INT = /^[+-]?\d+$/
const NUMBER = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/
const TRUE = ['true', 'yes', '1']
const FALSE = ['false', 'no', '0']

/**
 * Convert a value given on the command line into the arg's type. `cwd` is
 * where relative paths resolve (the caller's directory, not the Recipe's).
 */
export function convertArgValue(spec: ArgSpec, raw: string, cwd: string): unknown {
  const {type} = spec
  const bad = (expected: string, fix: string) => new InputProblem(`${JSON.stringify(raw)} is not ${expected}`, fix)
  if (typeof type === 'object') {
    if (!type.enum.includes(raw)) throw bad(`one of ${type.enum.join(', ')}`, `use one of: ${type.enum.join(', ')}`)
    return raw
  }
  switch (type) {
    case 'string':
      return raw
    case 'path':
      if (raw === '') throw bad('a path', 'give a file or directory path')
      return resolvePath(raw, cwd)
    case 'int': {
      const n = Number(raw.trim())
      if (!INT.test(raw.trim()) || !Number.isSafeInteger(n))
        throw bad('an integer', 'use a whole number such as 3 or -1')
      return n
    }
    case 'number': {
      const n = Number(raw.trim())
      if (!NUMBER.test(raw.trim()) || !Number.isFinite(n)) throw bad('a number', 'use a finite number such as 2 or 0.5')
      return n
    }
    case 'bool': {
      const v = raw.trim().toLowerCase()
      if (TRUE.includes(v)) return true
      if (FALSE.includes(v)) return false
      throw bad('a bool', 'use true/false, yes/no or 1/0')
    }
    case 'array':
      return parseArray(raw, bad)
  }
}

function parseArray(raw: string, bad: (expected: string, fix: string) => InputProblem): string[] {
  const text = raw.trim()
  if (text.startsWith('[')) {
    let parsed: unknown
    try {
      parsed = JSON.parse(text)
    } catch {
      throw bad('a JSON array', 'use a JSON array of strings such as ["a b","c"], or a comma-separated list')
    }
    if (
      !Array.isArray(parsed) ||
      parsed.some((v) => typeof v !== 'string' && typeof v !== 'number' && typeof v !== 'boolean')
    ) {
      throw bad('an array of strings', 'use a JSON array of strings such as ["a b","c"]')
    }
    return parsed.map(String)
  }
  return text
    .split(',')
    .map((v) => v.trim())
    .filter((v) => v !== '')
}

/** `~` and `~/x` expand to the home directory; anything relative resolves against `cwd`. */
export function resolvePath(raw: string, cwd: string): string {
  if (raw === '~') return nodeOs().homedir()
  if (raw.startsWith('~/')) return resolve(nodeOs().homedir(), raw.slice(2))
  return resolve(cwd, raw)
}
