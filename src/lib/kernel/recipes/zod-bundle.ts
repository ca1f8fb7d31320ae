/**
 * The parts of zod (its tree-shakable `zod/mini` face, about 50 KB minified)
 * that the Recipe schema uses (src/lib/kernel/recipes/schema.ts): dist/zod.cjs, a
 * bundle of its own so that only an invocation that reads a Recipe evaluates
 * it. Only src/lib/kernel/recipes/zod.ts loads it. Add a name here when the schema
 * needs one more. The JSON Schema generator is ./zod-json-bundle.ts: only
 * `actors recipes --schema` needs it, and it is most of zod/mini's weight.
 */
export {
  array,
  boolean,
  enum,
  gte,
  int,
  lte,
  minLength,
  NEVER,
  nullable,
  number,
  optional,
  pipe,
  record,
  strictObject,
  string,
  superRefine,
  transform,
  union,
  unknown,
} from 'zod/mini'
