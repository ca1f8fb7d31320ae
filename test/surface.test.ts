/**
 * The command surface (commands, their arguments and flags) is a public
 * contract: this snapshot makes any change to it a visible decision. To accept
 * a deliberate change, run `UPDATE_SURFACE=1 npx vitest run test/surface.test.ts`
 * and commit test/command-snapshot.json.
 */
import {existsSync, readFileSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {COMMANDS} from '../src/boot/cli.js'
import {actors, removeDir, tempDir} from './helpers.js'

const SNAPSHOT = join(import.meta.dirname, 'command-snapshot.json')

function surface() {
  return Object.fromEntries(
    Object.entries(COMMANDS)
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([id, command]) => {
        const c = command as unknown as {
          args?: Record<string, {required?: boolean}>
          flags?: Record<string, unknown>
          baseFlags?: Record<string, unknown>
        }
        return [
          id.replaceAll(':', ' '),
          {
            args: Object.entries(c.args ?? {}).map(([name, arg]) => (arg.required ? name : `[${name}]`)),
            flags: [...Object.keys({...c.baseFlags, ...c.flags}), 'json'].sort(),
          },
        ]
      }),
  )
}

describe('command surface', () => {
  it('matches the committed snapshot', () => {
    const now = surface()
    if (process.env.UPDATE_SURFACE || !existsSync(SNAPSHOT))
      writeFileSync(SNAPSHOT, JSON.stringify(now, null, 2) + '\n')
    expect(now).toEqual(JSON.parse(readFileSync(SNAPSHOT, 'utf8')))
  })

  it('every command answers --help with exit 0 and plain text, and refuses an unknown flag with exit 2', () => {
    const home = tempDir()
    try {
      for (const id of Object.keys(COMMANDS)) {
        const words = id.split(':')
        const help = actors(home, [...words, '--help'])
        expect(help.code, id).toBe(0)
        expect(help.stdout, id).toContain('USAGE')
        expect(help.stdout + help.stderr, id).not.toMatch(/\u001B\[/)
        const bad = actors(home, [...words, '--no-such-flag', '--json'])
        expect(bad.code, id).toBe(2)
        expect(bad.json?.error?.exit_code, id).toBe(2)
        expect(actors(home, ['help', ...words]).stdout, `help ${id}`).toBe(help.stdout)
      }
    } finally {
      removeDir(home)
    }
    // Three CLI starts per command (17 of them with `lock` and `mcp`): minutes on a loaded 2-core machine.
  }, 240_000)

  it('an unknown command or topic gets the usual error form, exit 2, and the list of commands', () => {
    // No command is near these words, so no "did you mean" (conventions.test.ts covers that).
    const home = tempDir()
    try {
      for (const words of [['zzzzzz'], ['music', 'bogus'], ['help', 'zzzzzz']]) {
        const r = actors(home, words)
        const named = words.filter((w) => w !== 'help').join(' ')
        expect(r.code, named).toBe(2)
        expect(r.stderr, named).toBe(
          `actors: unknown command "${named}"\n  fix: one of ${Object.keys(COMMANDS)
            .map((id) => id.replaceAll(':', ' '))
            .join(', ')}; see \`actors --help\`\n`,
        )
      }
      expect(actors(home, ['bogus', '--json']).json).toEqual({
        error: {message: 'unknown command "bogus"', exit_code: 2, fix: expect.stringContaining('actors --help')},
      })
      // A complete command takes what follows as arguments: `recipes bogus` is a Recipe lookup, not an unknown command.
      expect(actors(home, ['recipes', 'bogus']).stderr).toMatch(/^actors: no Recipe named "bogus"/)
    } finally {
      removeDir(home)
    }
  })
})
