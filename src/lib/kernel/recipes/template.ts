/**
 * Placeholders inside one template word: `{name}` substitutes a value,
 * `{{` and `}}` are literal braces. Substitution works per argv word, so a
 * value can never split into more words or reach a shell; the one exception
 * is an `array` value filling a whole word, which becomes one word per item.
 */
import {ARG_NAME} from './arg-name.js'
import {formatValue} from './args.js'

export type WordPart = {literal: string} | {placeholder: string}

/** Parse a word into literal text and placeholders; throws a plain Error on a stray brace. */
export function parseWord(word: string): WordPart[] {
  const parts: WordPart[] = []
  let literal = ''
  let i = 0
  while (i < word.length) {
    const c = word[i]
    if (c === '{' && word[i + 1] === '{') {
      literal += '{'
      i += 2
    } else if (c === '}' && word[i + 1] === '}') {
      literal += '}'
      i += 2
    } else if (c === '{') {
      const end = word.indexOf('}', i + 1)
      const name = end === -1 ? '' : word.slice(i + 1, end)
      if (!ARG_NAME.test(name)) {
        const shown = end === -1 ? word.slice(i) : word.slice(i, end + 1)
        throw new Error(`"${shown}" in ${JSON.stringify(word)} is not a placeholder`)
      }
      if (literal) parts.push({literal})
      literal = ''
      parts.push({placeholder: name})
      i = end + 1
    } else if (c === '}') {
      throw new Error(`stray "}" in ${JSON.stringify(word)}`)
    } else {
      literal += c
      i++
    }
  }
  if (literal || parts.length === 0) parts.push({literal})
  return parts
}

/** The placeholder names used in a word, for load-time checking. */
export function placeholdersOf(word: string): string[] {
  return parseWord(word).flatMap((p) => ('placeholder' in p ? [p.placeholder] : []))
}

/**
 * Render one word into zero or more argv words. Every placeholder must be in
 * `values` (checked at load time, so a miss here is a bug).
 */
export function renderWord(word: string, values: Record<string, unknown>): string[] {
  const parts = parseWord(word)
  if (parts.length === 1 && 'placeholder' in parts[0]) {
    const value = lookup(values, parts[0].placeholder)
    if (Array.isArray(value)) return value.map(String)
    return [formatValue(value)]
  }
  return [renderString(word, values, parts)]
}

/**
 * The values that begin argv words once `word` is rendered, with the arg each
 * comes from: every item of an array filling the whole word, else the first
 * non-empty value when no literal text comes before it. A word a value begins
 * can be read as an option by the command it is placed into (option-args.ts).
 */
export function leadingValues(word: string, values: Record<string, unknown>): {name: string; text: string}[] {
  const parts = parseWord(word)
  if (parts.length === 1 && 'placeholder' in parts[0]) {
    const name = parts[0].placeholder
    const value = lookup(values, name)
    return (Array.isArray(value) ? value.map(String) : [formatValue(value)]).map((text) => ({name, text}))
  }
  for (const part of parts) {
    if ('literal' in part) {
      if (part.literal !== '') return []
      continue
    }
    const text = formatValue(lookup(values, part.placeholder))
    if (text !== '') return [{name: part.placeholder, text}]
  }
  return []
}

/** Render a word as exactly one string (env values, cwd, artifact paths): arrays join with commas. */
export function renderString(word: string, values: Record<string, unknown>, parts = parseWord(word)): string {
  return parts.map((p) => ('literal' in p ? p.literal : formatValue(lookup(values, p.placeholder)))).join('')
}

function lookup(values: Record<string, unknown>, name: string): unknown {
  if (!Object.hasOwn(values, name)) throw new Error(`internal: placeholder {${name}} has no value`)
  return values[name]
}
