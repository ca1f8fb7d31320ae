/**
 * The fast parser (src/lib/surface/cli/parse-argv.ts) against oclif's own, on
 * generated argv for every command definition: whenever the fast parser
 * accepts an invocation, oclif must accept it too and give the same
 * arguments, positional words and flags (defaults included). The fast parser
 * may decline anything (oclif then answers), so the property is one-way; a
 * floor on how much it accepts keeps the test from passing by declining all.
 * Seeded, so a failure names a reproducible argv.
 */
import {Flags, Parser} from '@oclif/core'
import {describe, expect, it} from 'vitest'
import {commandFromDefinition} from '../src/commands/base-command.js'
import {withFlagDefaults, type AnyCommandDefinition, type FlagDefinition} from '../src/lib/surface/cli/definition.js'
import {HOT_COMMANDS} from '../src/lib/surface/cli/hot-commands.js'
import {mcpCommand} from '../src/lib/surface/cli/mcp.js'
import {musicPlayCommand, musicServeCommand} from '../src/lib/surface/cli/music.js'
import {parseInvocation} from '../src/lib/surface/cli/parse-argv.js'
import {pruneCommand} from '../src/lib/surface/cli/prune.js'
import {recipesCommand, recipesValidateCommand} from '../src/lib/surface/cli/recipes.js'

const DEFINITIONS: AnyCommandDefinition[] = [
  ...Object.values(HOT_COMMANDS),
  pruneCommand,
  recipesCommand,
  recipesValidateCommand,
  musicPlayCommand,
  musicServeCommand,
  mcpCommand,
]
const CASES = 1000

/** mulberry32: a small seeded PRNG. */
function random(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const WORDS = [
  'a',
  'b-1',
  'x=1',
  'name=Ada',
  '-',
  '-5',
  '--',
  '--json',
  '--help',
  '-h',
  '--bogus',
  '--home',
  '/tmp/h',
  '',
  'two words',
  'true',
  '0',
]
const INTEGERS = ['0', '1', '5', '100', '101', '-1', '2.5', 'abc', '007', '99999999999999999']

/** Tokens worth trying for one flag: its spellings, good and bad values. */
function flagTokens(name: string, flag: FlagDefinition): string[][] {
  if (flag.type === 'boolean') {
    return [
      [`--${name}`],
      [`--no-${name}`],
      [`--${name}=true`],
      [`--${name}=false`],
      ...(flag.char ? [[`-${flag.char}`], [`-${flag.char}x`]] : []),
    ]
  }
  const values = flag.type === 'integer' ? INTEGERS : [...(flag.options ?? []), 'v', 'some value', '-x', '--json', '']
  return values.flatMap((value) => [[`--${name}`, value], [`--${name}=${value}`]]).concat([[`--${name}`]])
}

/** A good value for a flag: in range, one of its options, a plain word. */
function goodValue(flag: FlagDefinition, next: () => number): string {
  if (flag.type === 'integer') return String((flag.min ?? 0) + Math.floor(next() * 5))
  if (flag.type === 'string' && flag.options) return flag.options[Math.floor(next() * flag.options.length)]
  return ['v', 'some value', '/tmp/h', '30s'][Math.floor(next() * 4)]
}

/**
 * Half the cases are clean (the required words, a few flags with good values,
 * in any order): what people type. The other half draw from every spelling,
 * good and bad: where the two parsers could drift.
 */
function generate(definition: AnyCommandDefinition, next: () => number): string[] {
  const flags = Object.entries({
    ...(definition.flags as Record<string, FlagDefinition>),
    home: {type: 'string', description: ''} as FlagDefinition,
  })
  const pick = <T>(items: T[]): T => items[Math.floor(next() * items.length)]
  if (next() < 0.5) {
    const words: string[][] = Object.values(definition.args as Record<string, {required?: boolean}>)
      .filter((arg) => arg.required || next() < 0.5)
      .map(() => [pick(['a', 'b-1', 'x=1', 'name=Ada'])])
    const chosen = flags.filter(() => next() < 0.3)
    const parts = [
      ...chosen.map(([name, flag]) =>
        flag.type === 'boolean'
          ? [flag.allowNo && next() < 0.5 ? `--no-${name}` : `--${name}`]
          : next() < 0.5
            ? [`--${name}`, goodValue(flag, next)]
            : [`--${name}=${goodValue(flag, next)}`],
      ),
    ]
    // Words keep their order among themselves; flags land anywhere.
    for (const part of parts) words.splice(Math.floor(next() * (words.length + 1)), 0, part)
    if (next() < 0.2) words.push(['--json'])
    return words.flat()
  }
  const pool: string[][] = [...WORDS.map((w) => [w]), ...flags.flatMap(([name, flag]) => flagTokens(name, flag))]
  const length = Math.floor(next() * 7)
  const argv: string[] = []
  for (let i = 0; i < length; i++) argv.push(...pick(pool))
  return argv
}

/** oclif's reading of `argv` for `definition`, as the oclif front end parses it, or undefined when oclif refuses it. */
async function oclifParse(definition: AnyCommandDefinition, given: string[]) {
  const command = commandFromDefinition(definition)
  let argv = given
  try {
    if (definition.normalizeArgv) argv = definition.normalizeArgv(given)
  } catch {
    return undefined
  }
  const args = Object.fromEntries(
    Object.entries(command.args ?? {}).map(([name, arg]) => [name, {...arg, ignoreStdin: true}]),
  )
  try {
    const parsed = await Parser.parse(argv, {
      flags: {...command.flags, ...command.baseFlags, json: Flags.boolean()},
      args,
      strict: command.strict,
    })
    const {json: _json, ...flags} = parsed.flags as Record<string, unknown>
    return {args: parsed.args, argv: parsed.argv, flags: withFlagDefaults(definition, flags)}
  } catch {
    return undefined
  }
}

describe('the fast parser agrees with oclif on generated argv', () => {
  it.each(DEFINITIONS.map((d) => [d.id, d] as const))('%s', async (_id, definition) => {
    const next = random(0x5eed + definition.id.length * 7919 + definition.id.charCodeAt(0))
    let accepted = 0
    for (let n = 0; n < CASES; n++) {
      const argv = generate(definition, next)
      const fast = parseInvocation(definition, argv, {})
      if (!fast) continue
      accepted++
      const oclif = await oclifParse(definition, argv)
      const what = `${definition.id} ${JSON.stringify(argv)}`
      expect(oclif, `${what}: the fast parser accepted what oclif refuses`).toBeDefined()
      expect({args: fast.args, argv: fast.argv, flags: fast.flags}, what).toEqual(oclif)
    }
    // Enough accepted that the agreement means something (clean invocations are most of real use).
    expect(accepted, `${definition.id}: accepted ${accepted} of ${CASES}`).toBeGreaterThan(CASES * 0.05)
  })
})
