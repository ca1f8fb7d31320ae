/**
 * zod's JSON Schema generator (dist/zod-json.cjs, about 23 KB minified), for
 * `actors recipes --schema` alone: kept out of dist/zod.cjs (./zod-bundle.ts),
 * which every Recipe launch loads. It reads the schemas dist/zod.cjs made by
 * their definitions. Only src/lib/base/platform/zod.ts loads it.
 */
export {toJSONSchema} from 'zod/mini'
