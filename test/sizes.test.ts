/**
 * Issue 25, "Files of one concern": no function in src/ over 80 lines, and
 * files over 400 lines reported (not failed): a file's size is a signal to
 * look, and a concern that needs more lines is not cut in two to fit it (a
 * cut follows a concern). Functions are measured with the TypeScript
 * compiler's own parser, so a function is what the language says it is: a
 * declaration, a method (and accessors and constructors), an arrow function
 * or a function expression, each counted from its first to its last line
 * when it has a body.
 */
import {readdirSync, readFileSync} from 'node:fs'
import {join, relative} from 'node:path'
import ts from 'typescript'
import {describe, expect, it} from 'vitest'
import {ROOT} from './helpers.js'

const SRC = join(ROOT, 'src')
const MAX_FILE_LINES = 400
const MAX_FUNCTION_LINES = 80

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, {withFileTypes: true}).flatMap((entry) => {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) return sourceFiles(path)
    return /\.tsx?$/.test(entry.name) && !entry.name.endsWith('.d.ts') ? [path] : []
  })
}

/** Every function-like node with a body in `text` longer than `max` lines, as `name (N lines, line L)`. */
export function longFunctions(fileName: string, text: string, max = MAX_FUNCTION_LINES): string[] {
  const source = ts.createSourceFile(
    fileName,
    text,
    ts.ScriptTarget.Latest,
    true,
    fileName.endsWith('.tsx') ? ts.ScriptKind.TSX : ts.ScriptKind.TS,
  )
  const found: string[] = []
  const lineOf = (pos: number) => source.getLineAndCharacterOfPosition(pos).line + 1
  const visit = (node: ts.Node) => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body) {
      const first = lineOf(node.getStart(source))
      const lines = lineOf(node.getEnd()) - first + 1
      if (lines > max) {
        const named = (node as ts.FunctionLikeDeclaration).name
        found.push(`${named ? named.getText(source) : '(anonymous)'} (${lines} lines, line ${first})`)
      }
    }
    ts.forEachChild(node, visit)
  }
  visit(source)
  return found
}

/** Number of lines of `text` (a final newline ends the last line, it does not start another). */
function lineCount(text: string): number {
  return text.split('\n').length - (text.endsWith('\n') ? 1 : 0)
}

describe('sizes of src/', () => {
  it('catches a function over 80 lines (the check itself can fail)', () => {
    const body = Array.from({length: 79}, (_, i) => `  const v${i} = ${i}`).join('\n')
    const long = `export function tooLong() {\n${body}\n}\n` // 81 lines
    const arrow = `const ok = () => {\n${body.split('\n').slice(1).join('\n')}\n}\n` // 80 lines
    expect(longFunctions('x.ts', long)).toEqual(['tooLong (81 lines, line 1)'])
    expect(longFunctions('x.ts', arrow)).toEqual([])
    expect(longFunctions('x.ts', `class A {\n  m() {\n${body}\n  }\n}\n`)).toEqual(['m (81 lines, line 2)'])
    expect(longFunctions('x.ts', `f(function () {\n${body}\n})\n`)).toEqual(['(anonymous) (81 lines, line 1)'])
  })

  it(`reports the files over ${MAX_FILE_LINES} lines`, () => {
    const over = sourceFiles(SRC)
      .map((file) => ({file, lines: lineCount(readFileSync(file, 'utf8'))}))
      .filter(({lines}) => lines > MAX_FILE_LINES)
      .map(({file, lines}) => `${relative(ROOT, file)}: ${lines} lines`)
    if (over.length > 0) console.log(`files over ${MAX_FILE_LINES} lines (each one concern?):\n  ${over.join('\n  ')}`)
  })

  it(`has no function over ${MAX_FUNCTION_LINES} lines`, () => {
    const over = sourceFiles(SRC).flatMap((file) =>
      longFunctions(file, readFileSync(file, 'utf8')).map((f) => `${relative(ROOT, file)}: ${f}`),
    )
    expect(over).toEqual([])
  })
})
