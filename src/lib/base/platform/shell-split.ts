/**
 * Splitting a template string into argv words the way a POSIX shell would
 * (whitespace, single quotes, double quotes, backslashes) without ever
 * running a shell: no expansion, no globbing, no operators. `;`, `|`, `$()`
 * and friends are plain characters here.
 */

/**
 * Split `text` into words. Throws a plain Error with a short reason on an
 * unterminated quote or a trailing backslash; the caller adds file and field.
 */
export function shellSplit(text: string): string[] {
  const words: string[] = []
  let word = ''
  let inWord = false
  let i = 0
  while (i < text.length) {
    const c = text[i]
    if (c === ' ' || c === '\t' || c === '\n' || c === '\r') {
      if (inWord) words.push(word)
      word = ''
      inWord = false
      i++
      continue
    }
    inWord = true
    if (c === "'") {
      const end = text.indexOf("'", i + 1)
      if (end === -1) throw new Error('unterminated single quote')
      word += text.slice(i + 1, end)
      i = end + 1
    } else if (c === '"') {
      i++
      for (;;) {
        if (i >= text.length) throw new Error('unterminated double quote')
        const d = text[i]
        if (d === '"') break
        // Inside double quotes a backslash only escapes these, as in sh.
        if (d === '\\' && i + 1 < text.length && '"\\$`\n'.includes(text[i + 1])) {
          if (text[i + 1] !== '\n') word += text[i + 1]
          i += 2
          continue
        }
        word += d
        i++
      }
      i++
    } else if (c === '\\') {
      if (i + 1 >= text.length) throw new Error('trailing backslash')
      // Backslash-newline is a line continuation, as in sh.
      if (text[i + 1] !== '\n') word += text[i + 1]
      else if (word === '') inWord = false
      i += 2
    } else {
      word += c
      i++
    }
  }
  if (inWord) words.push(word)
  return words
}
