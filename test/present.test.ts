/**
 * Output in one place (src/lib/surface/present/): the output mode is decided once,
 * by one function, for every command; a definition returns its result and
 * never writes stdout; the JSON document (and NDJSON) comes from one writer.
 */
import {mkdirSync, readdirSync, readFileSync, writeFileSync} from 'node:fs'
import {join, relative} from 'node:path'
import {afterAll, afterEach, beforeAll, describe, expect, it} from 'vitest'
import {COMMANDS} from '../src/boot/cli.js'
import type {AnyCommandDefinition} from '../src/lib/surface/cli/definition.js'
import {inspectCommand} from '../src/lib/surface/cli/inspect.js'
import {lockAcquireCommand, lockReleaseCommand, lockStatusCommand} from '../src/lib/surface/cli/lock.js'
import {parseInvocation} from '../src/lib/surface/cli/parse-argv.js'
import {pruneCommand} from '../src/lib/surface/cli/prune.js'
import {recipesCommand, recipesValidateCommand} from '../src/lib/surface/cli/recipes.js'
import {decideOutput, type OutputMode} from '../src/lib/surface/present/mode.js'
import {show} from '../src/lib/surface/present/present.js'
import {documentResult, liveResult, type CommandResult, type TextSinks} from '../src/lib/surface/present/result.js'
import {removeHome, ROOT, tempDir} from './helpers.js'
import {jsonAtDepth, jsonDocument} from '../src/lib/surface/present/write.js'

const SRC = join(ROOT, 'src')

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, {withFileTypes: true}).flatMap((entry) => {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) return sourceFiles(path)
    return /\.tsx?$/.test(entry.name) ? [path] : []
  })
}

/** Source without comments (a comment may name what the code must not do). */
function code(file: string): string {
  return readFileSync(file, 'utf8')
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .replace(/^\s*\/\/.*$/gm, '')
}

/** What a result showed, in order: `out:`, `note:` and `json:` entries. */
function collector(): {to: TextSinks; shown: string[]} {
  const shown: string[] = []
  return {
    shown,
    to: {
      out: (t) => shown.push(`out:${t}`),
      note: (t) => shown.push(`note:${t}`),
      json: (d) => shown.push(`json:${JSON.stringify(d)}`),
      jsonText: (t) => shown.push(`json:${Buffer.concat(Array.from(t, (piece) => Buffer.from(piece))).toString()}`),
    },
  }
}

describe('the output mode', () => {
  const env = (vars: Record<string, string>) => vars as NodeJS.ProcessEnv

  it('is json under --json whatever the terminal and environment say', () => {
    for (const isTTY of [true, false, undefined]) {
      for (const vars of [{}, {CI: 'true'}, {TERM: 'dumb'}, {CI: '0'}] as Array<Record<string, string>>)
        expect(decideOutput({json: true, isTTY: () => isTTY, env: env(vars)})).toBe('json')
    }
    // --json never asks whether stdout is a terminal: asking makes process.stdout, which costs start-up time.
    const asked = () => {
      throw new Error('isTTY asked under --json')
    }
    expect(decideOutput({json: true, isTTY: asked, env: env({})})).toBe('json')
  })

  it('is plain without a TTY, with CI set to anything but "", "false" or "0", or with TERM=dumb; Ink otherwise', () => {
    const cases: Array<[boolean | undefined, Record<string, string>, OutputMode]> = [
      [false, {}, 'plain'],
      [undefined, {}, 'plain'],
      [false, {CI: 'false'}, 'plain'],
      [true, {}, 'ink'],
      [true, {CI: 'true'}, 'plain'],
      [true, {CI: '1'}, 'plain'],
      [true, {CI: 'github'}, 'plain'],
      [true, {CI: ''}, 'ink'],
      [true, {CI: 'false'}, 'ink'],
      [true, {CI: '0'}, 'ink'],
      [true, {TERM: 'dumb'}, 'plain'],
      [true, {TERM: 'xterm-256color'}, 'ink'],
      [true, {CI: '0', TERM: 'dumb'}, 'plain'],
    ]
    for (const [isTTY, vars, mode] of cases)
      expect(
        decideOutput({json: false, isTTY: () => isTTY, env: env(vars)}),
        `isTTY=${isTTY} ${JSON.stringify(vars)}`,
      ).toBe(mode)
  })

  it('is decided in one place: decideOutput is called by the front end only, and nothing else reads isTTY or CI for output', () => {
    const callers: string[] = []
    const readers: string[] = []
    for (const file of sourceFiles(SRC)) {
      const text = code(file)
      const rel = relative(ROOT, file)
      if (/\bdecideOutput\s*\(/.test(text) && rel !== 'src/lib/surface/present/mode.ts') callers.push(rel)
      if (/stdout\.isTTY|env\.CI\b|\.TERM\b/.test(text) && rel !== 'src/lib/surface/present/mode.ts') readers.push(rel)
    }
    expect(callers).toEqual(['src/lib/surface/present/present.ts'])
    expect(readers).toEqual(['src/lib/surface/present/present.ts'])
  })
})

describe('jsonAtDepth', () => {
  it("is, byte for byte, the text an element has inside jsonDocument's document at that depth", () => {
    const values = [
      {run: 'a', argv: ['sh', '-c', 'echo "x\ny"'], resources: {}, tags: [], nested: [[1, {b: null}]]},
      [],
      {},
      'text\nwith a newline',
      7,
      null,
      [[{}], []],
    ]
    for (const value of values) {
      expect(jsonDocument([value])).toBe(`[\n${jsonAtDepth(value, 1)}\n]\n`)
      expect(jsonDocument({runs: [value, 1]})).toBe(`{\n  "runs": [\n${jsonAtDepth(value, 2)},\n    1\n  ]\n}\n`)
      expect(jsonAtDepth(value, 0)).toBe(JSON.stringify(value, null, 2))
    }
  })
})

describe('showing a result', () => {
  const exitCode = process.exitCode
  afterEach(() => {
    process.exitCode = exitCode
  })

  const doc = documentResult({run: 'a', n: 1}, (d, to) => {
    to.note('before\n')
    to.out(`${d.run} ${d.n}\n`)
  })

  it('prints a document as JSON under json, through its plain face otherwise (there is no Ink face for a document)', async () => {
    for (const [mode, expected] of [
      ['json', ['json:{"run":"a","n":1}']],
      ['plain', ['note:before\n', 'out:a 1\n']],
      ['ink', ['note:before\n', 'out:a 1\n']],
    ] as Array<[OutputMode, string[]]>) {
      const {to, shown} = collector()
      await show(doc, mode, to)
      expect(shown, mode).toEqual(expected)
    }
  })

  it('says the notes in every mode, first, and sets the exit code once shown', async () => {
    for (const mode of ['json', 'plain', 'ink'] as OutputMode[]) {
      const {to, shown} = collector()
      process.exitCode = 0
      await show(
        documentResult({ok: false}, (_d, t) => t.out('no\n'), {notes: 'why\n', exitCode: 5}),
        mode,
        to,
      )
      expect(shown[0], mode).toBe('note:why\n')
      expect(shown).toHaveLength(2)
      expect(process.exitCode).toBe(5)
    }
    const {to, shown} = collector()
    await show(documentResult(undefined), 'json', to)
    await show(undefined, 'plain', to)
    expect(shown).toEqual([])
  })

  it('runs exactly one renderer of a live result, the one of the mode (plain on a TTY when there is no Ink face), then shows what it ends with', async () => {
    const ran: string[] = []
    const live = (withInk: boolean) =>
      liveResult({
        json: async () => {
          ran.push('json')
          return documentResult({done: true})
        },
        plain: async () => {
          ran.push('plain')
          return documentResult({done: true}, (_d, to) => to.out('done\n'))
        },
        ink: withInk
          ? async () => {
              ran.push('ink')
              return undefined
            }
          : undefined,
      })
    const cases: Array<[OutputMode, boolean, string, string[]]> = [
      ['json', true, 'json', ['json:{"done":true}']],
      ['plain', true, 'plain', ['out:done\n']],
      ['ink', true, 'ink', []],
      ['ink', false, 'plain', ['out:done\n']],
    ]
    for (const [mode, withInk, renderer, expected] of cases) {
      ran.length = 0
      const {to, shown} = collector()
      await show(live(withInk), mode, to)
      expect(ran, `${mode} ink=${withInk}`).toEqual([renderer])
      expect(shown).toEqual(expected)
    }
  })
})

describe('commands return their results', () => {
  it('no definition reads --json and nothing but the one writer writes stdout (the Ink views draw through ink)', () => {
    const readsJson: string[] = []
    const writers: string[] = []
    for (const file of sourceFiles(SRC)) {
      const text = code(file)
      const rel = relative(ROOT, file)
      if (rel.startsWith('src/lib/surface/cli/') && /\brun\s*\(\s*\{[^}]*\bjson\b/.test(text)) readsJson.push(rel)
      // A direct write, a console log, or process.stdout handed on as a default stream
      // (the output guard takes it so, to wrap its write, and the stdout reader to watch its
      // drain and its pipe; neither writes). `actors mcp` is no command output: its stdout
      // is the JSON-RPC channel (src/boot/mcp.ts, src/lib/surface/mcp/).
      const mcp = rel === 'src/boot/mcp.ts' || rel.startsWith('src/lib/surface/mcp/')
      const readers =
        rel === 'src/lib/surface/present/output-guard.ts' || rel === 'src/lib/surface/present/stdout-reader.ts'
      const allowed = rel === 'src/lib/surface/present/write.ts' || readers || rel.startsWith('src/views/') || mcp
      if (/process\.stdout\.write\s*\(|console\.(log|info)\s*\(|=\s*process\.stdout\b/.test(text) && !allowed)
        writers.push(rel)
    }
    expect(readsJson).toEqual([])
    expect(writers).toEqual([])
    // Every command is a definition shown by present(): each oclif shell only wraps one (src/commands/base-command.ts).
    const shells = sourceFiles(join(SRC, 'commands')).filter((file) => !file.endsWith('/base-command.ts'))
    expect(shells.length).toBe(Object.keys(COMMANDS).length)
    for (const shell of shells)
      expect(code(shell), relative(ROOT, shell)).toMatch(/export default commandFromDefinition\(\w+\)/)
  })

  describe('in process, with a state root', () => {
    let home: string
    beforeAll(() => {
      home = tempDir()
      mkdirSync(join(home, 'recipes'))
      writeFileSync(join(home, 'recipes', 'echo.yaml'), 'args:\n  - word\ntemplate: echo {word}\n')
    })
    afterAll(() => removeHome(home))

    /** Run `definition` with `argv` while stdout is watched: it must write nothing and return a result to show. */
    async function runQuietly(definition: AnyCommandDefinition, argv: string[]): Promise<CommandResult> {
      const invocation = parseInvocation(definition, [...argv, '--home', home, '--json'], {})
      expect(invocation, argv.join(' ')).toBeDefined()
      const write = process.stdout.write
      const written: string[] = []
      process.stdout.write = ((chunk: string) => {
        written.push(String(chunk))
        return true
      }) as typeof process.stdout.write
      try {
        const result = await definition.run(invocation!)
        expect(written, `${definition.id} wrote to stdout itself`).toEqual([])
        return result
      } finally {
        process.stdout.write = write
      }
    }

    it('each returns a document that the front end prints as one JSON document, and writes nothing itself', async () => {
      const exitCode = process.exitCode
      const cases: Array<[AnyCommandDefinition, string[]]> = [
        [inspectCommand, []],
        [inspectCommand, ['--tree']],
        [recipesCommand, []],
        [recipesCommand, ['echo']],
        [recipesValidateCommand, [join(home, 'recipes')]],
        [lockAcquireCommand, ['repo', '--holder', 'ci-1', '--lease', '1m']],
        [lockStatusCommand, []],
        [lockReleaseCommand, ['repo', '--holder', 'ci-1']],
        [pruneCommand, []],
      ]
      try {
        for (const [definition, argv] of cases) {
          const result = await runQuietly(definition, argv)
          expect(result?.kind, definition.id).toBe('document')
          const {to, shown} = collector()
          await show(result, 'json', to)
          const json = shown.filter((s) => s.startsWith('json:'))
          expect(json, `${definition.id} ${argv.join(' ')}`).toHaveLength(1)
          // A document printed from the command's own text (inspect --json): the very bytes its document prints as.
          if (result?.kind === 'document' && result.printed)
            expect(json[0]).toBe(`json:${jsonDocument(result.document)}`)
          expect(
            shown.filter((s) => s.startsWith('out:')),
            definition.id,
          ).toEqual([])
        }
      } finally {
        process.exitCode = exitCode
      }
    })
  })
})
