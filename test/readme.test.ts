/**
 * README's shell examples run as pasted (issue: a newcomer's first hour):
 * every line of every ```sh block, in order, against a fresh state root,
 * with bin/ on the PATH, must exit 0. A line may be skipped only when its
 * trailing comment says what it needs (`# needs a cluster: ...`), so a reader
 * sees it too. `npm ci && ` and `npm run build && ` in front of a line are taken
 * as done (the clone the tests run in is installed and built).
 */
import {spawnSync} from 'node:child_process'
import {readFileSync} from 'node:fs'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {globMatches} from '../src/lib/mcp/policy.js'
import {recipeNames, recipeRoots} from '../src/lib/recipes/roots.js'
import {BIN, ROOT, cliEnv, homesPerTest, removeDir, tempDir} from './helpers.js'

const home = homesPerTest('actors-readme-')

/** The lines of the ```sh blocks of a Markdown text, without blank and comment-only lines. */
export function shellLines(markdown: string): string[] {
  const lines: string[] = []
  for (const block of markdown.matchAll(/^```sh\n([\s\S]*?)^```$/gm)) {
    for (const line of block[1].split('\n')) if (line.trim() && !line.trim().startsWith('#')) lines.push(line.trim())
  }
  return lines
}

/** The trailing comment of a shell line (after `  # `), or ''. */
function trailingComment(line: string): string {
  const at = line.search(/\s{2,}# /)
  return at === -1 ? '' : line.slice(at).trim().slice(2)
}

/** Run each line with bash (pipefail) in ROOT; returns the lines that failed, with their exit code and stderr. */
export function runShellLines(
  lines: string[],
  stateRoot: string,
): {ran: number; skipped: string[]; failures: string[]} {
  const env = {...cliEnv(stateRoot), PATH: `${join(BIN, '..')}:${process.env.PATH}`}
  const failures: string[] = []
  const skipped: string[] = []
  let ran = 0
  for (const line of lines) {
    if (trailingComment(line).startsWith('needs')) {
      skipped.push(line)
      continue
    }
    const command = line.replace(/^npm ci && (npm run build && )?/, '')
    const r = spawnSync('bash', ['-o', 'pipefail', '-c', command], {
      cwd: ROOT,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
      encoding: 'utf8',
      timeout: 180_000,
    })
    ran++
    if (r.status !== 0)
      failures.push(`${line}\n  -> exit ${r.status ?? r.signal}: ${r.stderr.trim().split('\n').slice(-3).join(' | ')}`)
  }
  return {ran, skipped, failures}
}

describe('README', () => {
  it('every shell line runs as pasted (exit 0), skipping only lines marked `# needs ...`', () => {
    const lines = shellLines(readFileSync(join(ROOT, 'README.md'), 'utf8'))
    const {ran, skipped, failures} = runShellLines(lines, home())
    expect(failures).toEqual([])
    expect(ran).toBeGreaterThan(25)
    // What is skipped says so in the README itself: needs a terminal, audio, a cluster, the whole suite.
    for (const line of skipped) expect(line).toMatch(/\s{2,}# needs /)
  }, 600_000)
})

describe('docs/mcp.md', () => {
  it('host configs allow shipped Recipes: every --allow pattern matches one', () => {
    const empty = tempDir()
    // Only the shipped library: an empty state root and cwd add no Recipe root.
    const shipped = recipeNames(recipeRoots({home: empty, cwd: empty}))
    removeDir(empty)
    const text = readFileSync(join(ROOT, 'docs', 'mcp.md'), 'utf8')
    const configs = text.slice(text.indexOf('Claude Code:'), text.indexOf('When `actors` is not on'))
    const lists = [...configs.matchAll(/--allow['"]?,?\s*['"]([^'"]+)['"]/g)].map((m) => m[1])
    expect(lists.length).toBeGreaterThanOrEqual(5)
    for (const list of lists)
      for (const pattern of list.split(','))
        expect(
          shipped.some((name) => globMatches(pattern, name)),
          `${pattern} in ${list}`,
        ).toBe(true)
  })
})
