/** Glob patterns over slash-separated names, as `actors mcp --allow` takes them for Recipe names. */

/**
 * Whether Recipe `name` matches a glob `pattern`: `*` is any run of characters
 * within one path segment, `**` any run across segments, `?` one character.
 */
export function globMatches(pattern: string, name: string): boolean {
  let source = ''
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]
    if (c === '*' && pattern[i + 1] === '*') {
      source += '.*'
      i++
    } else if (c === '*') source += '[^/]*'
    else if (c === '?') source += '[^/]'
    else source += c.replace(/[.+^${}()|[\]\\]/g, '\\$&')
  }
  return new RegExp(`^${source}$`).test(name)
}
