/**
 * Bundles loaded on first use. What only some invocations need (the MCP
 * server, the yaml library) is built into a CommonJS bundle of its own,
 * dist/<name>.cjs, so the others never compile nor evaluate it.
 */
import {dirname, join} from 'node:path'
import {fileURLToPath} from 'node:url'
import {nodeModule} from './builtins.js'

type BundleLoader = (name: string) => unknown

/**
 * dist/<name>.cjs: through bin/actors' code-cache loader when it lends one
 * (globalThis.__actorsLoadBundle, see bin/actors), else a plain require() of
 * the file beside this bundle (a bundle started by node directly, or required
 * by the build); `fromSources` when this module runs from src/ (the tests).
 * Each call evaluates the bundle again: callers keep what it returns.
 */
export function loadBundle<T>(name: string, fromSources: () => T): T {
  const lent = (globalThis as {__actorsLoadBundle?: BundleLoader}).__actorsLoadBundle
  if (lent) return lent(name) as T
  const here = fileURLToPath(import.meta.url)
  // In a bundle this module lives in dist/<bundle>.cjs; in the sources in src/lib/base/platform/.
  if (here.endsWith('.cjs')) return nodeModule().createRequire(here)(join(dirname(here), `${name}.cjs`)) as T
  return fromSources()
}
