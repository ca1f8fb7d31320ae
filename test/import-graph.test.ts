/**
 * SPEC, "Stack": no import cycles in src/; and src/ stacks by tier, read from
 * the tree: src/lib/ holds tier folders whose names sort bottom-up, src/views/
 * sits between services and surface, src/commands/ and src/boot/ on top. A
 * folder imports from any folder of a lower tier, and from folders of its own
 * tier as long as they tie to one another without a circle. The graph is
 * built here from the source text, every tie a module has: static
 * `import`/`export ... from` and side-effect imports of relative modules,
 * type-only ones included (a type is a dependency of the design even though
 * the compiler erases it), `typeof import()` and `import()` of relative
 * modules, and loads by name: importView('NAME') (src/views/NAME.tsx) and
 * loadBundle('NAME') (the entry scripts/build.mjs builds dist/NAME.cjs from).
 * Then searched depth first. No dependency: madge would do the same.
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

/** Every tie of `text` to another module of src/: its static imports (type-only ones too), `import()` and loads by name. */
export function everyTie(text: string, file: string, bundles: Map<string, string>): string[] {
  const code = text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '')
  const ties = staticImports(text, true).map((specifier) => resolve(dirname(file), specifier))
  // `typeof import('./x.js')` and `await import('./x.js')`.
  for (const m of code.matchAll(/\bimport\(\s*['"](\.[^'"]+)['"]\s*\)/g)) ties.push(resolve(dirname(file), m[1]))
  for (const m of code.matchAll(/\bimportView(?:<[^\n]*?>)?\(\s*['"]([^'"]+)['"]/g)) ties.push(join(SRC, 'views', m[1]))
  for (const m of code.matchAll(/\bloadBundle(?:<[^\n]*?>)?\(\s*['"]([^'"]+)['"]/g)) {
    const entry = bundles.get(m[1])
    if (!entry)
      throw new Error(`${relative(ROOT, file)} loads the bundle ${m[1]}, which scripts/build.mjs does not build`)
    ties.push(join(ROOT, entry))
  }
  return ties
}

/** Bundle name → its entry (`entryPoints: {NAME: 'src/...'}` in scripts/build.mjs). */
function bundleEntries(): Map<string, string> {
  const build = readFileSync(join(ROOT, 'scripts', 'build.mjs'), 'utf8')
  return new Map(
    [...build.matchAll(/entryPoints:\s*\{\s*'?([\w-]+)'?:\s*'([^']+)'\s*\}/g)].map(
      (m) => [m[1], m[2]] as [string, string],
    ),
  )
}

/** file → files it is tied to, for every file under src/: static imports only, or (`every`) every tie. */
function importGraph(every = false): Map<string, string[]> {
  const files = sourceFiles(SRC)
  const known = new Set(files)
  const bundles = bundleEntries()
  const graph = new Map<string, string[]>()
  for (const file of files) {
    const text = readFileSync(file, 'utf8')
    const ties = every
      ? everyTie(text, file, bundles)
      : staticImports(text).map((specifier) => resolve(dirname(file), specifier))
    const targets = ties.map((tie) => {
      const base = tie.replace(/\.(c|m)?js$/, '').replace(/\.tsx?$/, '')
      const found = [`${base}.ts`, `${base}.tsx`, join(base, 'index.ts')].find((candidate) => known.has(candidate))
      if (!found) throw new Error(`${relative(ROOT, file)} is tied to ${relative(ROOT, tie)}, which is no file in src/`)
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
    // Every tie: the lazy import, a type taken from a module, views and bundles loaded by name.
    const file = join(SRC, 'lib/surface/present/x.ts')
    const more = [
      text,
      "type V = typeof import('../../../views/runs-live.js')",
      "await importView<typeof import('../../../views/wait-live.js')>('wait-live')",
      "loadBundle<Y>('yaml', () => 0)",
    ].join('\n')
    expect(
      everyTie(more, file, new Map([['yaml', 'src/lib/kernel/recipes/yaml-bundle.ts']])).map((t) => relative(SRC, t)),
    ).toEqual([
      ...['./a.js', './c.js', './d.js', './e.js', '../f.js', './side.js'].map((s) =>
        relative(SRC, resolve(dirname(file), s)),
      ),
      'lib/surface/present/lazy.js',
      'views/runs-live.js',
      'views/wait-live.js',
      'views/wait-live',
      'lib/kernel/recipes/yaml-bundle.ts',
    ])
    const graph = importGraph()
    // The scan sees real edges: reads depend on locks and state files.
    expect(graph.get(join(SRC, 'lib/kernel/runs/store.ts'))).toContain(join(SRC, 'lib/base/platform/file-lock.ts'))
    expect(graph.size).toBeGreaterThan(50)
  })

  it('has no cycle, every tie read', () => {
    const cycles = findCycles(importGraph(true)).map((cycle) => cycle.map((file) => relative(SRC, file)).join(' → '))
    expect(cycles).toEqual([])
  })
})

/** The tiers of src/lib/, lowest first: the folders of src/lib/, whose names sort in that order. */
const LIB_TIERS = readdirSync(join(SRC, 'lib'), {withFileTypes: true})
  .filter((entry) => entry.isDirectory())
  .map((entry) => `lib/${entry.name}`)
  .sort()

/**
 * Every tier of src/, lowest first: those of src/lib/, with src/views/ just below surface (the views draw
 * from services' view-state, surface's present loads them by name), then src/commands/ and src/boot/.
 */
const TIERS = [
  ...LIB_TIERS.filter((tier) => tier < 'lib/surface'),
  'views',
  ...LIB_TIERS.filter((tier) => tier >= 'lib/surface'),
  'commands',
  'boot',
]

const EXECUTORS = 'lib/kernel/executors'

/** The folder ("room") of a file: its folder in a tier of src/lib/, else its folder under src/. */
function folderOf(file: string): string {
  const parts = relative(SRC, file).split('/')
  if (parts[0] === 'lib') return parts.slice(0, 3).join('/')
  return parts.length > 1 ? parts[0] : '(top)'
}

/** The tier of a folder: `lib/TIER` for the folders of src/lib/, else the folder itself. */
function tierOf(folder: string): string {
  return folder.startsWith('lib/') ? folder.split('/').slice(0, 2).join('/') : folder
}

/** Ties that point up the tiers (or leave them): `from → to` with both folders. */
export function upwardImports(graph: Map<string, string[]>, tiers: string[]): string[] {
  const rank = new Map(tiers.map((tier, index) => [tier, index]))
  const found: string[] = []
  for (const [file, targets] of graph) {
    for (const target of targets) {
      const from = rank.get(tierOf(folderOf(file)))
      const to = rank.get(tierOf(folderOf(target)))
      if (from === undefined || to === undefined || to > from)
        found.push(`${relative(SRC, file)} (${folderOf(file)}) → ${relative(SRC, target)} (${folderOf(target)})`)
    }
  }
  return found
}

/** Circles between the folders of one tier: each as the chain of folders that closes it, a tie for each step. */
export function tierCircles(graph: Map<string, string[]>): string[] {
  const folders = new Map<string, string[]>()
  const example = new Map<string, string>()
  for (const [file, targets] of graph) {
    for (const target of targets) {
      const [from, to] = [folderOf(file), folderOf(target)]
      if (from === to || tierOf(from) !== tierOf(to)) continue
      if (!folders.get(from)?.includes(to)) folders.set(from, [...(folders.get(from) ?? []), to])
      example.set(`${from} ${to}`, `${relative(SRC, file)} → ${relative(SRC, target)}`)
    }
  }
  return findCycles(folders).map((cycle) =>
    cycle
      .slice(1)
      .map((to, i) => example.get(`${cycle[i]} ${to}`))
      .join(', '),
  )
}

describe(`the tiers of src/ (${TIERS.join(', ')}: lowest first)`, () => {
  it('hold every folder of src/: src/lib/ holds tiers of folders, nothing loose (no manifest of the order either)', () => {
    const dirs = (dir: string) =>
      readdirSync(dir, {withFileTypes: true})
        .filter((entry) => entry.isDirectory())
        .map((entry) => entry.name)
    const files = (dir: string) =>
      readdirSync(dir, {withFileTypes: true})
        .filter((entry) => entry.isFile())
        .map((entry) => entry.name)
    // src/views/ is placed just below surface/: that tier must be there.
    expect(LIB_TIERS).toContain('lib/surface')
    expect(['lib', ...TIERS.filter((tier) => !tier.startsWith('lib/'))].sort()).toEqual(dirs(SRC).sort())
    expect(files(SRC)).toEqual([])
    expect(files(join(SRC, 'lib'))).toEqual([])
    for (const tier of LIB_TIERS) {
      expect(files(join(SRC, tier)), tier).toEqual([])
      expect(dirs(join(SRC, tier)).length, tier).toBeGreaterThan(0)
    }
  })

  it('has no tie that points up a tier, every tie read', () => {
    expect(upwardImports(importGraph(true), TIERS)).toEqual([])
  })

  it('has no circle between the folders of one tier, every tie read', () => {
    expect(tierCircles(importGraph(true))).toEqual([])
  })

  it('catches a `typeof import()` that points up (the reading of ties itself can fail)', () => {
    const store = join(SRC, 'lib/kernel/runs/store.ts')
    const ties = everyTie("type C = typeof import('../../services/control/control.js')", store, new Map())
    expect(upwardImports(new Map([[store, ties.map((t) => t.replace(/\.js$/, '.ts'))]]), TIERS)).toEqual([
      `lib/kernel/runs/store.ts (lib/kernel/runs) → lib/services/control/control.ts (lib/services/control)`,
    ])
  })

  it('catches an import that points up (the check itself can fail)', () => {
    const store = join(SRC, 'lib/kernel/runs/store.ts')
    const control = join(SRC, 'lib/services/control/control.ts')
    expect(upwardImports(new Map([[store, [control]]]), TIERS)).toEqual([
      `lib/kernel/runs/store.ts (lib/kernel/runs) → lib/services/control/control.ts (lib/services/control)`,
    ])
    expect(upwardImports(new Map([[control, [store]]]), TIERS)).toEqual([])
    // views sits between services and surface.
    const view = join(SRC, 'views/wait-live.tsx')
    const present = join(SRC, 'lib/surface/present/present.ts')
    expect(upwardImports(new Map([[present, [view]]]), TIERS)).toEqual([])
    expect(upwardImports(new Map([[control, [view]]]), TIERS)).toHaveLength(1)
  })

  it('catches a circle between two folders of one tier (ties each way within a tier can fail)', () => {
    const store = join(SRC, 'lib/kernel/runs/store.ts')
    const executors = join(SRC, EXECUTORS, 'index.ts')
    expect(tierCircles(new Map([[executors, [store]]]))).toEqual([])
    expect(
      tierCircles(
        new Map([
          [executors, [store]],
          [store, [executors]],
        ]),
      ),
    ).toEqual([
      'lib/kernel/executors/index.ts → lib/kernel/runs/store.ts, lib/kernel/runs/store.ts → lib/kernel/executors/index.ts',
    ])
  })

  it('keeps every executor behind the seam: outside executors/, only executors/index.ts and executor.ts are imported', () => {
    const seam = new Set([join(SRC, EXECUTORS, 'index.ts'), join(SRC, EXECUTORS, 'executor.ts')])
    const reaching: string[] = []
    for (const [file, targets] of importGraph(true)) {
      if (folderOf(file) === EXECUTORS) continue
      for (const target of targets)
        if (folderOf(target) === EXECUTORS && !seam.has(target))
          reaching.push(`${relative(SRC, file)} → ${relative(SRC, target)}`)
    }
    expect(reaching).toEqual([])
  })

  it("keeps the kinds inside executors/: no other file names one in code (run.json's default kind lives in records/run.ts)", () => {
    const kinds = readdirSync(join(SRC, EXECUTORS))
      .map((name) => /^(\w+)-executor\.ts$|^(local)\.ts$/.exec(name))
      .filter((m) => m !== null)
      .map((m) => m[1] ?? m[2])
    expect(kinds.sort()).toEqual(['local', 'slurm'])
    const naming: string[] = []
    for (const file of importGraph().keys()) {
      if (folderOf(file) === EXECUTORS || file === join(SRC, 'lib/base/records/run.ts')) continue
      // Code only: comments may name a kind.
      const code = readFileSync(file, 'utf8').replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, '')
      for (const kind of kinds)
        if (new RegExp(`['"\`]${kind}['"\`]`).test(code)) naming.push(`${relative(SRC, file)}: '${kind}'`)
    }
    expect(naming).toEqual([])
  })
})

describe('the folders of src/lib/', () => {
  it('are each described under their tier in the README Layout tables, which name no folder that is gone', () => {
    const folders = LIB_TIERS.flatMap((tier) =>
      readdirSync(join(SRC, tier), {withFileTypes: true})
        .filter((entry) => entry.isDirectory())
        .map((entry) => `${tier}/${entry.name}`),
    ).sort()
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8')
    const layout = readme.slice(readme.indexOf('## Layout'), readme.indexOf('\n## ', readme.indexOf('## Layout') + 1))
    // A tier's table follows its line `**`TIER/`** ...`; each row names one or more folders of that tier.
    const described: string[] = []
    let tier = '(no tier)'
    for (const line of layout.split('\n')) {
      const heading = /^\*\*`([a-z-]+)\/`\*\*/.exec(line)
      if (heading) tier = `lib/${heading[1]}`
      const row = /^\| ((?:`[a-z-]+\/`(?:, )?)+) \|/.exec(line)
      if (row) described.push(...[...row[1].matchAll(/`([a-z-]+)\/`/g)].map((n) => `${tier}/${n[1]}`))
    }
    expect(described.sort()).toEqual(folders)
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

  it("name only files that exist (a path from src/, src/lib/ or a tier of it, the file's folder or the repository; a bare name anywhere in src/)", () => {
    const all = sourceFiles(SRC)
    const stale: string[] = []
    for (const file of all) {
      for (const {name, line} of namedFiles(readFileSync(file, 'utf8'))) {
        if (name.startsWith('dist/') || /\bNAME\b/.test(name)) continue
        const places = [
          join(ROOT, name),
          join(SRC, name),
          join(SRC, 'lib', name),
          ...LIB_TIERS.map((tier) => join(SRC, tier, name)),
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
