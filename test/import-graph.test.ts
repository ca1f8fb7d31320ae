/**
 * SPEC, "Stack": no import cycles in src/; and src/ stacks by layer: each
 * folder imports only from folders below it in src/layers.json. The graph is
 * built here from the source text (static `import`/`export ... from` and
 * side-effect imports of relative modules, type-only ones included: a type
 * is a dependency of the design even though the compiler erases it; dynamic
 * `import()` loads lazily and is left out), then searched depth first. No
 * dependency: madge would do the same.
 */
import {existsSync, readdirSync, readFileSync} from 'node:fs'
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

/** The relative modules `text` imports (specifiers as written); type-only imports too when `types`. */
export function staticImports(text: string, types = false): string[] {
  const code = text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '')
  const specifiers: string[] = []
  // `import x from`, `import {a, type B} from`, `export {a} from`, `export * from`; `import type` / `export type` when asked.
  for (const m of code.matchAll(/(?:^|[;\n])\s*(import|export)(\s+type\b)?\s[^'";]*?\bfrom\s*['"]([^'"]+)['"]/g)) {
    if (!m[2] || types) specifiers.push(m[3])
  }
  // `import './side-effect.js'`
  for (const m of code.matchAll(/(?:^|[;\n])\s*import\s*['"]([^'"]+)['"]/g)) specifiers.push(m[1])
  return specifiers.filter((s) => s.startsWith('.'))
}

/** file → files it imports, for every file under src/ (type-only imports too when `types`). */
function importGraph(types = false): Map<string, string[]> {
  const files = sourceFiles(SRC)
  const known = new Set(files)
  const graph = new Map<string, string[]>()
  for (const file of files) {
    const targets = staticImports(readFileSync(file, 'utf8'), types).map((specifier) => {
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
  it('reads the imports a module really has (dynamic ones excluded, type-only ones on request)', () => {
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
    expect(staticImports(text, true)).toEqual(['./a.js', './c.js', './d.js', './e.js', '../f.js', './side.js'])
    const graph = importGraph()
    // The scan sees real edges: reads depend on locks and state files.
    expect(graph.get(join(SRC, 'lib/runs/store.ts'))).toContain(join(SRC, 'lib/platform/file-lock.ts'))
    expect(graph.size).toBeGreaterThan(50)
  })

  it('has no cycle, type-only imports included', () => {
    const cycles = findCycles(importGraph(true)).map((cycle) => cycle.map((file) => relative(SRC, file)).join(' → '))
    expect(cycles).toEqual([])
  })
})

/** The layer ("room") of a file: its folder under src/lib/, else its folder under src/. */
function layerOf(file: string): string {
  const parts = relative(SRC, file).split('/')
  if (parts[0] === 'lib') return `lib/${parts[1]}`
  return parts.length > 1 ? parts[0] : '(top)'
}

/** Imports that point up the order of src/layers.json: `from → to` with both layers. */
export function upwardImports(graph: Map<string, string[]>, order: string[]): string[] {
  const rank = new Map(order.map((layer, index) => [layer, index]))
  const found: string[] = []
  for (const [file, targets] of graph) {
    for (const target of targets) {
      const from = rank.get(layerOf(file))
      const to = rank.get(layerOf(target))
      if (from === undefined || to === undefined || to > from)
        found.push(`${relative(SRC, file)} (${layerOf(file)}) → ${relative(SRC, target)} (${layerOf(target)})`)
    }
  }
  return found
}

describe('the layers of src/ (src/layers.json, lowest first)', () => {
  const order = JSON.parse(readFileSync(join(SRC, 'layers.json'), 'utf8')) as string[]

  it('lists every folder of src/ once, and nothing else', () => {
    const folders = readdirSync(SRC, {withFileTypes: true})
      .filter((entry) => entry.isDirectory())
      .flatMap((entry) =>
        entry.name === 'lib'
          ? readdirSync(join(SRC, 'lib'), {withFileTypes: true})
              .filter((e) => e.isDirectory())
              .map((e) => `lib/${e.name}`)
          : [entry.name],
      )
    expect([...order].sort()).toEqual(folders.sort())
    expect(new Set(order).size).toBe(order.length)
    // No module loose at the top of src/: each belongs to a layer.
    expect(
      readdirSync(SRC, {withFileTypes: true}).filter((entry) => entry.isFile() && /\.tsx?$/.test(entry.name)),
    ).toEqual([])
  })

  it('has no import that points up the order, type-only imports included', () => {
    expect(upwardImports(importGraph(true), order)).toEqual([])
  })

  it('catches an import that points up (the check itself can fail)', () => {
    const store = join(SRC, 'lib/runs/store.ts')
    const control = join(SRC, 'lib/control/control.ts')
    expect(upwardImports(new Map([[store, [control]]]), order)).toEqual([
      `lib/runs/store.ts (lib/runs) → lib/control/control.ts (lib/control)`,
    ])
    expect(upwardImports(new Map([[control, [store]]]), order)).toEqual([])
  })

  it('keeps every executor behind the seam: outside executors/, only executors/index.ts and executor.ts are imported', () => {
    const seam = new Set([join(SRC, 'lib/executors/index.ts'), join(SRC, 'lib/executors/executor.ts')])
    const reaching: string[] = []
    for (const [file, targets] of importGraph(true)) {
      if (layerOf(file) === 'lib/executors') continue
      for (const target of targets)
        if (layerOf(target) === 'lib/executors' && !seam.has(target))
          reaching.push(`${relative(SRC, file)} → ${relative(SRC, target)}`)
    }
    expect(reaching).toEqual([])
  })

  it("keeps the kinds inside executors/: no other file names one in code (run.json's default kind lives in records/run.ts)", () => {
    const kinds = readdirSync(join(SRC, 'lib/executors'))
      .map((name) => /^(\w+)-executor\.ts$|^(local)\.ts$/.exec(name))
      .filter((m) => m !== null)
      .map((m) => m[1] ?? m[2])
    expect(kinds.sort()).toEqual(['local', 'slurm'])
    const naming: string[] = []
    for (const file of importGraph().keys()) {
      if (layerOf(file) === 'lib/executors' || file === join(SRC, 'lib/records/run.ts')) continue
      // Code only: comments may name a kind.
      const code = readFileSync(file, 'utf8').replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, '')
      for (const kind of kinds)
        if (new RegExp(`['"\`]${kind}['"\`]`).test(code)) naming.push(`${relative(SRC, file)}: '${kind}'`)
    }
    expect(naming).toEqual([])
  })
})

describe('the folders of src/lib/', () => {
  it('hold every kernel module (none loose at the top) and are each described in the README Layout table, which names no folder that is gone', () => {
    const lib = join(SRC, 'lib')
    const entries = readdirSync(lib, {withFileTypes: true})
    expect(entries.filter((entry) => entry.isFile()).map((entry) => entry.name)).toEqual([])
    const folders = entries
      .filter((entry) => entry.isDirectory())
      .map((entry) => entry.name)
      .sort()
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8')
    const layout = readme.slice(readme.indexOf('## Layout'), readme.indexOf('\n## ', readme.indexOf('## Layout') + 1))
    const described = [...layout.matchAll(/^\| ((?:`[a-z-]+\/`(?:, )?)+) \|/gm)]
      .flatMap((m) => [...m[1].matchAll(/`([a-z-]+)\/`/g)].map((n) => n[1]))
      .sort()
    expect(described).toEqual(folders)
  })
})

describe('comments in src/', () => {
  /** Every `path/file.ts`-like name in the comments of `text`, with its line. */
  const namedFiles = (text: string): Array<{name: string; line: number}> =>
    [...text.matchAll(/\/\/.*$|\/\*[\s\S]*?\*\//gm)].flatMap((comment) =>
      [...comment[0].matchAll(/((?:[\w.-]+\/)*[\w.-]+\.(?:tsx?|cjs|md))\b/g)].map((m) => ({
        name: m[1],
        line: text.slice(0, comment.index).split('\n').length,
      })),
    )

  it("name only files that exist (a path from src/, src/lib/, the file's folder or the repository; a bare name anywhere in src/)", () => {
    const all = sourceFiles(SRC)
    const stale: string[] = []
    for (const file of all) {
      for (const {name, line} of namedFiles(readFileSync(file, 'utf8'))) {
        if (name.startsWith('dist/') || /\bNAME\b/.test(name)) continue
        const places = [
          join(ROOT, name),
          join(SRC, name),
          join(SRC, 'lib', name),
          join(dirname(file), name),
          join(ROOT, 'docs', name),
        ]
        if (places.some((place) => existsSync(place))) continue
        if (!name.includes('/') && all.some((other) => other.endsWith(`/${name}`))) continue
        stale.push(`${relative(ROOT, file)}:${line}: ${name}`)
      }
    }
    expect(stale).toEqual([])
  })
})
