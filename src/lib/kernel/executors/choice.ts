/**
 * Which executor a launch gets (SPEC: Executors): `run --on` wins, then the
 * Recipe's `executor` field, then `ACTORS_EXECUTOR`, else local. Every
 * source is validated before anything is created; the kinds and each kind's
 * Recipe options are the executors' own (registry.ts, executor.ts).
 */
import {usageError} from '../../base/platform/errors.js'
import {didYouMean} from '../../base/platform/did-you-mean.js'
import {isMapping, type Said, saysBy, show, unknownKey} from '../../base/platform/zod-issues.js'
import type {Zod} from '../../base/platform/zod.js'
import type {ExecutorChoice} from './executor.js'
import {EXECUTORS, executorNamed} from './registry.js'

/** The executor kinds there are (`local`, `slurm`). */
export const EXECUTOR_KINDS = Object.keys(EXECUTORS)

/** Validate an executor name given by `--on` or ACTORS_EXECUTOR (exit 2 naming the value and the fix). */
export function parseExecutorKind(value: string, source: string): string {
  if (EXECUTOR_KINDS.includes(value)) return value
  throw usageError(
    `${source} ${JSON.stringify(value.slice(0, 80))} is not an executor`,
    `${didYouMean(value, EXECUTOR_KINDS)}use ${EXECUTOR_KINDS.map((kind) => (source === '--on' ? `--on ${kind}` : `${source}=${kind}`)).join(' or ')}`,
    {executor: value, executors: [...EXECUTOR_KINDS]},
  )
}

/**
 * The executor of a launch: `--on` wins, then the Recipe's `executor`, then
 * ACTORS_EXECUTOR. The chosen executor keeps the Recipe's options when the
 * Recipe names the same kind.
 */
export function chooseExecutor(
  flag: string | undefined,
  recipe: ExecutorChoice | undefined,
  env: NodeJS.ProcessEnv = process.env,
): ExecutorChoice {
  const fromEnv = env.ACTORS_EXECUTOR ? parseExecutorKind(env.ACTORS_EXECUTOR, 'ACTORS_EXECUTOR') : undefined
  const kind = flag !== undefined ? parseExecutorKind(flag, '--on') : (recipe?.kind ?? fromEnv)
  return executorNamed(kind).choose(recipe?.kind === kind ? recipe : undefined, env)
}

/**
 * A Recipe's `executor` field: a mapping of `kind` and that kind's options
 * (each executor's recipeOptions()). A field of another kind is named as
 * such, any other by the nearest executor field.
 */
export function recipeExecutorSchema(z: Zod) {
  const options = Object.fromEntries(EXECUTOR_KINDS.map((kind) => [kind, executorNamed(kind).recipeOptions(z)]))
  const fields = ['kind', ...new Set(Object.values(options).flatMap((shape) => Object.keys(shape)))]
  const otherField = (kind: string) =>
    saysBy((_, issue) => {
      const key = issue.keys?.[0] ?? ''
      const takers = EXECUTOR_KINDS.filter((other) => other !== kind && Object.hasOwn(options[other], key))
      if (takers.length === 0) return unknownKey(issue, 'is not an executor field', fields)
      return {
        at: [key],
        problem: `applies to kind: ${takers.join(', ')} only`,
        fix: `drop it, or write kind: ${takers[0]}`,
      }
    })
  // The kind's own issue stands at `executor.kind`.
  const kinds = (kind: unknown): Said => ({
    problem: kind === undefined ? 'is missing' : `${show(kind)} is not ${EXECUTOR_KINDS.join(' or ')}`,
    fix: `write ${EXECUTOR_KINDS.map((kind) => `kind: ${kind}`).join(' or ')}`,
  })
  const [first, ...rest] = EXECUTOR_KINDS.map((kind) =>
    z.strictObject({kind: z.literal(kind), ...options[kind]}, otherField(kind)),
  )
  return z.discriminatedUnion(
    'kind',
    [first, ...rest],
    saysBy((value) =>
      isMapping(value)
        ? kinds(value.kind)
        : {problem: 'is not a mapping', fix: `write executor: {kind: ${EXECUTOR_KINDS.join(' | ')}, ...}`},
    ),
  )
}
