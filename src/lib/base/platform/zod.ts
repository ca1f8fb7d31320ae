/**
 * zod, loaded the first time a Recipe is validated: it lives in dist/zod.cjs
 * (built from ./zod-bundle.ts), not in the bundles every command starts with,
 * so `run -- CMD`, inspect, wait and the other hot commands that read no
 * Recipe never evaluate it.
 */
import {loadBundle} from './bundles.js'
import {nodeModule} from './builtins.js'

/** What dist/zod.cjs (./zod-bundle.ts) exports of zod/mini. */
export type Zod = typeof import('./zod-bundle.js')
type ZodJson = typeof import('./zod-json-bundle.js')

let zod: Zod | undefined

/** The zod functions of ./zod-bundle.ts, loading dist/zod.cjs on first use. */
export function zodLibrary(): Zod {
  zod ??= loadBundle<Zod>('zod', () => nodeModule().createRequire(import.meta.url)('zod/mini'))
  return zod
}

/** zod's JSON Schema generator (dist/zod-json.cjs, built from ./zod-json-bundle.ts), for `actors recipes --schema`. */
export function zodJsonSchema(): ZodJson['toJSONSchema'] {
  return loadBundle<ZodJson>('zod-json', () => nodeModule().createRequire(import.meta.url)('zod/mini')).toJSONSchema
}
