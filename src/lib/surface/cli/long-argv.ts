/**
 * oclif's parser is quadratic in the number of positional words (it filters
 * every token parsed so far for each new word, and sorts its argv with
 * indexOf): 20,000 words took seconds, 40,000 most of a minute. Positional
 * words beyond the command's declared arguments are only ever collected in
 * argv, so oclif is handed the tokens that can matter (every flag-like token,
 * every flag value, the first positional words) and the rest are put back in
 * its argv afterwards, in the order oclif itself gives (by first occurrence).
 */
import {HOME_FLAG, type AnyCommandDefinition, type FlagDefinition} from './definition.js'

/** The tokens oclif parses, and the positional words kept from it. */
export interface ShortenedArgv {
  parsed: string[]
  left: string[]
}

/**
 * Split `tokens` as oclif reads them: a token starting with `-` before the
 * first separating `--` is a flag (a value-taking `--NAME` takes the next
 * token with it), anything else a positional word. The first declared-args + 1
 * positional words stay (one more than the arguments, so a strict command's
 * "Unexpected argument" still comes from oclif, at its own point); the others
 * are left out.
 */
export function shortenArgv(definition: AnyCommandDefinition, tokens: string[]): ShortenedArgv {
  const flags: Record<string, FlagDefinition> = {...definition.flags, home: HOME_FLAG}
  const keep = Object.keys(definition.args).length + 1
  const parsed: string[] = []
  const left: string[] = []
  let flagsEnd = false
  let positional = 0
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i]
    if (!flagsEnd && token.startsWith('-') && token !== '-') {
      parsed.push(token)
      if (token === '--') flagsEnd = true
      else if (takesValue(flags, token) && i + 1 < tokens.length) parsed.push(tokens[++i])
      continue
    }
    if (++positional <= keep) parsed.push(token)
    else left.push(token)
  }
  return {parsed, left}
}

/** `--NAME` (no `=`) naming a flag that takes a value: oclif takes the next token as that value, whatever it is. */
function takesValue(flags: Record<string, FlagDefinition>, token: string): boolean {
  if (!token.startsWith('--') || token.includes('=')) return false
  const name = token.slice(2)
  return Object.hasOwn(flags, name) && flags[name].type !== 'boolean'
}

/** oclif's argv for the whole of `tokens`: its argv for the shortened tokens with the words left out put back, sorted as oclif sorts (stable, by first occurrence). */
export function restoreArgv(tokens: string[], parsedArgv: string[], left: string[]): string[] {
  if (left.length === 0) return parsedArgv
  const at = firstIndexOf(tokens)
  return [...parsedArgv, ...left].sort((a, b) => at(a) - at(b))
}

/** `tokens.indexOf(word)` for every word in constant time (one indexOf per word is quadratic). */
export function firstIndexOf(tokens: string[]): (word: string) => number {
  const first = new Map<string, number>()
  for (const [i, token] of tokens.entries()) if (!first.has(token)) first.set(token, i)
  return (word) => first.get(word) ?? -1
}
