/**
 * SPEC, "Stack": no import cycles in src/. The graph is built here from the
 * source text (static `import`/`export ... from` and side-effect imports of
 * relative modules; `import type` is erased by the compiler and dynamic
 * `import()` loads lazily, so neither can form a load-time cycle), then
 * searched depth first. No dependency: madge would do the same.
 */
import {readdirSync, readFileSync} from 'node:fs'
import {dirname, join, relative, resolve} from 'node:path'
import {describe, expect, it} from 'vitest'
import {ROOT} from './helpers.js'

const SRC = join(ROOT, 'src')

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, {withFileTypes: true}).flatMap((entry) => {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) return sourceFiles(path)
    return /\.tsx?$/.test(entry.name) && !entry.name.endsWith('.d.ts') ? [path] : []
  })
}

/** The relative modules `text` imports at load time (specifiers as written). */
export function staticImports(text: string): string[] {
  const code = text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '')
  const specifiers: string[] = []
  // `import x from`, `import {a, type B} from`, `export {a} from`, `export * from`; not `import type` / `export type`.
  for (const m of code.matchAll(/(?:^|[;\n])\s*(import|export)(\s+type\b)?\s[^'";]*?\bfrom\s*['"]([^'"]+)['"]/g)) {
    if (!m[2]) specifiers.push(m[3])
  }
  // `import './side-effect.js'`
  for (const m of code.matchAll(/(?:^|[;\n])\s*import\s*['"]([^'"]+)['"]/g)) specifiers.push(m[1])
  return specifiers.filter((s) => s.startsWith('.'))
}

/** file → files it imports, for every file under src/. */
function importGraph(): Map<string, string[]> {
  const files = sourceFiles(SRC)
  const known = new Set(files)
  const graph = new Map<string, string[]>()
  for (const file of files) {
    const targets = staticImports(readFileSync(file, 'utf8')).map((specifier) => {
      const base = resolve(dirname(file), specifier).replace(/\.(c|m)?js$/, '')
      const found = [`${base}.ts`, `${base}.tsx`, join(base, 'index.ts')].find((candidate) => known.has(candidate))
      if (!found) throw new Error(`${relative(ROOT, file)} imports ${specifier}, which is no file in src/`)
      return found
    })
    graph.set(file, targets)
  }
  return graph
}

/** Every cycle a depth-first search meets, each as the chain of files that closes it. */
function findCycles(graph: Map<string, string[]>): string[][] {
  const state = new Map<string, 'open' | 'done'>()
  const path: string[] = []
  const cycles: string[][] = []
  const visit = (file: string) => {
    state.set(file, 'open')
    path.push(file)
    for (const next of graph.get(file) ?? []) {
      if (state.get(next) === 'open') cycles.push([...path.slice(path.indexOf(next)), next])
      else if (!state.has(next)) visit(next)
    }
    path.pop()
    state.set(file, 'done')
  }
  for (const file of graph.keys()) if (!state.has(file)) visit(file)
  return cycles
}

describe('import graph of src/', () => {
  it('reads the imports a module really has (type-only and dynamic ones excluded)', () => {
    const text = [
      "import {a, type B} from './a.js'",
      "import type {C} from './c.js'",
      "export type {D} from './d.js'",
      "export * from './e.js'",
      "import {\n  f,\n  g,\n} from '../f.js'",
      "import './side.js'",
      "const h = await import('./lazy.js')",
      "// import {x} from './commented.js'",
      "import {readFileSync} from 'node:fs'",
    ].join('\n')
    expect(staticImports(text)).toEqual(['./a.js', './e.js', '../f.js', './side.js'])
    const graph = importGraph()
    // The scan sees real edges: reads depend on locks and state files.
    expect(graph.get(join(SRC, 'lib/runs/store.ts'))).toContain(join(SRC, 'lib/platform/lock.ts'))
    expect(graph.size).toBeGreaterThan(50)
  })

  it('has no cycle', () => {
    const cycles = findCycles(importGraph()).map((cycle) => cycle.map((file) => relative(SRC, file)).join(' → '))
    expect(cycles).toEqual([])
  })
})

describe('the folders of src/lib/', () => {
  it('hold every kernel module (none loose at the top) and are each described in the README Layout table, which names no folder that is gone', () => {
    const lib = join(SRC, 'lib')
    const entries = readdirSync(lib, {withFileTypes: true})
    expect(entries.filter((entry) => entry.isFile()).map((entry) => entry.name)).toEqual([])
    const folders = entries.filter((entry) => entry.isDirectory()).map((entry) => entry.name).sort()
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8')
    const layout = readme.slice(readme.indexOf('## Layout'), readme.indexOf('\n## ', readme.indexOf('## Layout') + 1))
    const described = [...layout.matchAll(/^\| ((?:`[a-z-]+\/`(?:, )?)+) \|/gm)].flatMap((m) => [...m[1].matchAll(/`([a-z-]+)\/`/g)].map((n) => n[1])).sort()
    expect(described).toEqual(folders)
  })
})
