/**
 * Linear argv: 30,000 words on the command line finish within 10 s on both
 * front ends (the fast parser and oclif), accepted or refused; and oclif's
 * reading of a long argv, shortened before its parse (src/lib/surface/cli/long-argv.ts),
 * is the reading it gives of the whole argv.
 */
import {Parser} from '@oclif/core'
import {describe, expect, it} from 'vitest'
import {commandFromDefinition} from '../src/commands/base-command.js'
import type {AnyCommandDefinition} from '../src/lib/surface/cli/definition.js'
import {HOT_COMMANDS} from '../src/lib/surface/cli/hot-commands.js'
import {restoreArgv, shortenArgv} from '../src/lib/surface/cli/long-argv.js'
import {actors, homesPerTest} from './helpers.js'

const home = homesPerTest('actors-long-argv-')
const FRONTS = [
  ['fast', {}],
  ['oclif', {ACTORS_FAST: '0'}],
] as const
const WORDS = Array.from({length: 30_000}, (_, i) => String(i + 1))

describe.each(FRONTS)('30,000 words (%s front end)', (_front, env) => {
  it('an ad-hoc command with 30,000 arguments launches within 10 s', () => {
    const h = home()
    const started = Date.now()
    const r = actors(h, ['run', '--json', '--', 'true', ...WORDS], {env, timeout: 60_000})
    expect(Date.now() - started, r.stderr).toBeLessThan(10_000)
    expect(r.code, r.stderr).toBe(0)
    expect(r.json.run).toMatch(/^true-/)
  })

  it('40,000 arguments are refused (run.json limit) within 10 s, naming the limit and a fix', () => {
    const h = home()
    const started = Date.now()
    const r = actors(h, ['run', '--', 'true', ...WORDS, ...WORDS.slice(0, 10_000)], {env, timeout: 60_000})
    expect(Date.now() - started, r.stderr).toBeLessThan(10_000)
    expect(r.code).toBe(2)
    expect(r.stderr).toMatch(/too large.*limit/)
    expect(r.stderr).toMatch(/fix:/)
  })

  it('a strict command given 30,000 words says all of them are unexpected, within 10 s', () => {
    const h = home()
    const started = Date.now()
    const r = actors(h, ['inspect', ...WORDS], {env, timeout: 60_000})
    expect(Date.now() - started, r.stderr.slice(0, 200)).toBeLessThan(10_000)
    expect(r.code).toBe(2)
    expect(r.stderr).toContain('Unexpected arguments: 2, 3, 4,')
    expect(r.stderr).toContain(', 29999, 30000')
  })
})

/** oclif's reading of `argv` for `definition`: parsed whole, or shortened and restored as the oclif front end does. */
async function oclifReading(definition: AnyCommandDefinition, argv: string[], shortened: boolean) {
  const command = commandFromDefinition(definition)
  const args = Object.fromEntries(Object.entries(command.args ?? {}).map(([n, a]) => [n, {...a, ignoreStdin: true}]))
  const options = {flags: {...command.flags, ...command.baseFlags}, args, strict: command.strict}
  const {parsed, left} = shortened ? shortenArgv(definition, argv) : {parsed: argv, left: []}
  try {
    const output = await Parser.parse(parsed, options)
    return {args: output.args, flags: output.flags, argv: restoreArgv(argv, output.argv as string[], left)}
  } catch (error) {
    const parse = (error as {parse?: {output: {argv: string[]}}}).parse
    // A strict command's unexpected words: oclif named the shortened ones; the front end names them all.
    if (parse && /^Unexpected/.test((error as Error).message))
      return {unexpected: restoreArgv(argv, parse.output.argv, left).slice(Object.keys(args).length)}
    return {error: (error as Error).message}
  }
}

describe('oclif reads a shortened argv as it reads the whole', () => {
  const words = ['a', 'b', 'a', '-', '-5', '--', '--json', '--home', 'x=1', '--name', '--bogus', '--wait', '-f', 'c']
  it.each(Object.values(HOT_COMMANDS).map((d) => [d.id, d] as const))('%s', async (_id, definition) => {
    // Seeded: every argv of 6 draws from `words`, then 5 more positional words (some repeated).
    let seed = 7
    const next = () => {
      seed = (seed * 1103515245 + 12345) % 2147483648
      return seed / 2147483648
    }
    let shortenedSome = 0
    for (let n = 0; n < 300; n++) {
      const argv = Array.from({length: 6}, () => words[Math.floor(next() * words.length)])
      argv.push(...Array.from({length: 5}, () => ['p', 'q', 'a', 'b', 'r'][Math.floor(next() * 5)]))
      if (shortenArgv(definition, argv).left.length > 0) shortenedSome++
      expect(await oclifReading(definition, argv, true), JSON.stringify(argv)).toEqual(
        await oclifReading(definition, argv, false),
      )
    }
    expect(shortenedSome).toBeGreaterThan(100)
  })
})
