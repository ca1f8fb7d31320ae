/**
 * The parts of zod (its tree-shakable `zod/mini` face, about 50 KB minified)
 * that the Recipe schema uses (src/lib/kernel/recipes/schema.ts, and the
 * executors' options): dist/zod.cjs, a bundle of its own so that only an
 * invocation that reads a Recipe evaluates it. Only
 * src/lib/base/platform/zod.ts loads it. Add a name here when the schema
 * needs one more. The JSON Schema generator is ./zod-json-bundle.ts: only
 * `actors recipes --schema` needs it, and it is most of zod/mini's weight.
 */
export {
  array,
  boolean,
  discriminatedUnion,
  enum,
  gte,
  int,
  literal,
  lte,
  minLength,
  NEVER,
  nullable,
  number,
  optional,
  pipe,
  record,
  regex,
  strictObject,
  string,
  superRefine,
  transform,
  union,
  unknown,
} from 'zod/mini'
