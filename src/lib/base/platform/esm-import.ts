/**
 * Dynamic import() of ES modules from the CommonJS CLI bundle.
 *
 * bin/actors compiles dist/cli.cjs through vm.Script with V8's code cache for
 * fast start-up (src/boot/code-cache.ts), and on Node 20 an import() inside
 * such a script has no loader ("A dynamic import callback was not
 * specified"). The code cache therefore lends the bundles its own import()
 * as `globalThis.__actorsImport`; outside the bundles (tests running the
 * sources) the plain import() is used.
 */
import {pathToFileURL} from 'node:url'
import {dirname, join} from 'node:path'
import {fileURLToPath} from 'node:url'

type Importer = (specifier: string) => Promise<unknown>

/** Import an ES module by absolute file URL or package name. */
export function importEsm<T>(specifier: string): Promise<T> {
  const lent = (globalThis as {__actorsImport?: Importer}).__actorsImport
  return (lent ? lent(specifier) : import(specifier)) as Promise<T>
}

/**
 * Import one Ink view (src/views/NAME.tsx, built to dist/views/NAME.js).
 * Only ever called on the TTY path: views load ink and react.
 */
export function importView<T>(name: string): Promise<T> {
  // Honour NO_COLOR: chalk (under ink) reads FORCE_COLOR but not NO_COLOR, and decides when first loaded.
  if (process.env.NO_COLOR && process.env.FORCE_COLOR === undefined) process.env.FORCE_COLOR = '0'
  const here = fileURLToPath(import.meta.url)
  // In the bundle this module lives in dist/cli.cjs (views in dist/views/); in the sources in src/lib/base/platform/
  // (views in src/views/).
  const file = here.endsWith('.cjs')
    ? join(dirname(here), 'views', `${name}.js`)
    : join(dirname(here), '..', '..', '..', 'views', `${name}.tsx`)
  return importEsm<T>(pathToFileURL(file).href)
}
