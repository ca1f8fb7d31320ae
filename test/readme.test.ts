/**
 * README's shell examples run as pasted (issue: a newcomer's first hour):
 * every line of every ```sh block, in order, against a fresh state root,
 * with bin/ on the PATH, must exit 0. A line may be skipped only when its
 * trailing comment says what it needs (`# needs a cluster: ...`), so a reader
 * sees it too. `npm ci && ` and `npm run build && ` in front of a line are taken
 * as done (the clone the tests run in is installed and built).
 */
import {spawnSync} from 'node:child_process'
import {readdirSync, readFileSync} from 'node:fs'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {globMatches} from '../src/lib/surface/mcp/policy.js'
import {recipeNames, recipeRoots} from '../src/lib/kernel/recipes/roots.js'
import {BIN, ROOT, cliEnv, homesPerTest, removeDir, tempDir} from './helpers.js'

const home = homesPerTest('actors-readme-')

/** The ```sh blocks of a Markdown text, each as its text. */
function shellBlocks(markdown: string): string[] {
  return [...markdown.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((m) => m[1])
}

/**
 * The commands of the ```sh blocks of a Markdown text, without blank and comment-only lines: one a line,
 * except that a construct spanning lines (`for ... done`, `case ... esac`) is one command, as a shell
 * reading the pasted block would take it. A block that starts with `# <path>.sh` is that shipped file's
 * text, not commands (fileBlocks).
 */
export function shellLines(markdown: string): string[] {
  const lines: string[] = []
  for (const block of shellBlocks(markdown)) {
    if (/^# \S+\.sh\n/.test(block)) continue
    let pending = ''
    for (const line of block.split('\n')) {
      if (!line.trim() || (!pending && line.trim().startsWith('#'))) continue
      pending = pending ? `${pending}\n${line}` : line.trim()
      if (spawnSync('bash', ['-n', '-c', pending]).status === 0) {
        lines.push(pending)
        pending = ''
      }
    }
    if (pending) lines.push(pending)
  }
  return lines
}

/** The blocks that show a shipped script (first line `# <path>.sh`): path and the text shown. */
function fileBlocks(markdown: string): {path: string; text: string}[] {
  return shellBlocks(markdown)
    .map((block) => /^# (\S+\.sh)\n([\s\S]*)$/.exec(block))
    .filter((m) => m !== null)
    .map((m) => ({path: m[1], text: m[2]}))
}

/**
 * Lines with a `<placeholder>` in them, skipped ones too: pasted, `actors control <run> volume 40` is a
 * redirection from a file named run. A placeholder is a variable set on the line or one before it
 * (`RUN=$(actors run ...)` then `actors control "$RUN" ...`).
 */
function placeholders(lines: string[]): string[] {
  return lines.filter((line) => /<[a-z][\w-]*>/i.test(line.replace(/\s{2,}#.*$/, '')))
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
    expect(placeholders(lines)).toEqual([])
    // What is skipped says so in the README itself: needs a terminal, audio, a cluster, the whole suite.
    for (const line of skipped) expect(line).toMatch(/\s{2,}# needs /)
  }, 600_000)
})

/**
 * docs/commands.md is left out: scripts/docs-commands.mjs writes it from each command's --help, and its
 * EXAMPLES are syntax shown in plain blocks (`$ actors adopt worker-1 ...`, Runs that do not exist), not
 * a walk-through; the commands they show are the ones the other docs run.
 */
const DOCS = readdirSync(join(ROOT, 'docs')).filter((name) => name.endsWith('.md') && name !== 'commands.md')

describe.each(DOCS)('docs/%s', (name) => {
  const text = () => readFileSync(join(ROOT, 'docs', name), 'utf8')
  it('every shell line runs as pasted (exit 0) in a fresh state root, skipping only lines marked `# needs ...`', () => {
    const lines = shellLines(text())
    expect(placeholders(lines)).toEqual([])
    const {skipped, failures} = runShellLines(lines, home())
    expect(failures).toEqual([])
    for (const line of skipped) expect(line).toMatch(/\s{2,}# needs /)
  }, 600_000)

  it('a script it shows (a block starting `# <path>.sh`) is the shipped file, word for word', () => {
    for (const {path, text: shown} of fileBlocks(text()))
      expect(readFileSync(join(ROOT, path), 'utf8'), path).toBe(shown)
  })
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
