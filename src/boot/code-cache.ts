/**
 * The bundles' code cache (dist/code-cache.cjs, loaded by bin/actors): each
 * bundle is compiled through V8's code cache. The first invocation stores
 * the compiled code in dist/<name>.cache (atomically, at exit, so it holds
 * every function that run compiled; silently skipped when dist/ is
 * read-only) and later invocations skip most of the compile work.
 *
 * Node 22.1 and later have a compile cache of their own
 * (module.enableCompileCache), tried in its place and measured (25 runs
 * each, medians, quiet machine): the same for the hot commands (`inspect`:
 * 90.2 against 90.2 ms on Node 24, 93.2 against 94.9 on Node 26), but 37 ms
 * slower on Node 24 and 11 ms slower on Node 26 for what oclif serves
 * (`--help`: 183 against 220 ms, 223 against 234), since Node keeps only
 * the code compiled before the module ran. So this one serves every version.
 */
import {readFileSync, renameSync, writeFileSync} from 'node:fs'
import {dirname, join} from 'node:path'
import vm from 'node:vm'

type ModuleClass = {
  new (id: string, parent: unknown): {filename: string; paths: string[]; exports: unknown; loaded: boolean}
  wrap(source: string): string
  createRequire(file: string): NodeJS.Require
  _nodeModulePaths(dir: string): string[]
}

/** `load(name)`: dist/<name>.cjs as a CommonJS module through its code cache, its exports. */
export function codeCacheLoader(dist: string, parent: NodeJS.Module): (name: string) => unknown {
  // The CommonJS loader's Module class itself: require('node:module') would load the public module and the parts of
  // the ES module loader it pulls in (most of a millisecond of every command).
  const Module = parent.constructor as unknown as ModuleClass
  // import() inside a vm.Script has no loader on Node 20; lend the bundles one (src/lib/base/platform/esm-import.ts).
  ;(globalThis as {__actorsImport?: unknown}).__actorsImport = (specifier: string) => import(specifier)
  return (name) => {
    const file = join(dist, `${name}.cjs`)
    const cacheFile = join(dist, `${name}.cache`)
    let cachedData: Buffer | undefined
    try {
      cachedData = readFileSync(cacheFile)
    } catch {}
    const script = new vm.Script(Module.wrap(readFileSync(file, 'utf8')), {filename: file, cachedData})
    const bundle = new Module(file, parent)
    bundle.filename = file
    bundle.paths = Module._nodeModulePaths(dirname(file))
    // Registered so oclif's own require() of its command target returns this instance.
    require.cache[file] = bundle as unknown as NodeJS.Module
    const wrapper = script.runInThisContext() as (...args: unknown[]) => void
    wrapper.call(bundle.exports, bundle.exports, Module.createRequire(file), bundle, file, dirname(file))
    bundle.loaded = true
    if (cachedData === undefined || script.cachedDataRejected) {
      process.once('exit', () => {
        try {
          const temp = `${cacheFile}.${process.pid}.tmp`
          writeFileSync(temp, script.createCachedData())
          renameSync(temp, cacheFile)
        } catch {}
      })
    }
    return bundle.exports
  }
}
