/**
 * Which executor a launch gets (SPEC: Executors): `run --on` wins, then the
 * Recipe's `executor` field, then `ACTORS_EXECUTOR`, else local. Every
 * source is validated before anything is created; the kinds and each kind's
 * Recipe options are the executors' own (registry.ts, executor.ts).
 */
import {usageError} from '../../base/platform/errors.js'
import {didYouMean} from '../../base/platform/did-you-mean.js'
import type {ExecutorChoice, FieldFail} from './executor.js'
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

/** Validate a Recipe's `executor` field (already parsed from YAML/JSON). */
export function readRecipeExecutor(value: unknown, fail: FieldFail): ExecutorChoice {
  const example = `write executor: {kind: ${EXECUTOR_KINDS.join(' | ')}, ...}`
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw fail('executor', 'is not a mapping', example)
  const data = value as Record<string, unknown>
  const fields = ['kind', ...new Set(Object.values(EXECUTORS).flatMap((executor) => executor.recipeFields))]
  for (const key of Object.keys(data)) {
    if (!fields.includes(key))
      throw fail(
        `executor.${key}`,
        'is not an executor field',
        `${didYouMean(key, fields)}allowed: ${fields.join(', ')}`,
      )
  }
  if (typeof data.kind !== 'string' || !EXECUTOR_KINDS.includes(data.kind)) {
    throw fail(
      'executor.kind',
      data.kind === undefined ? 'is missing' : `${JSON.stringify(data.kind)} is not ${EXECUTOR_KINDS.join(' or ')}`,
      `write ${EXECUTOR_KINDS.map((kind) => `kind: ${kind}`).join(' or ')}`,
    )
  }
  const executor = executorNamed(data.kind)
  for (const key of Object.keys(data)) {
    if (key === 'kind' || executor.recipeFields.includes(key)) continue
    const takers = EXECUTOR_KINDS.filter((kind) => executorNamed(kind).recipeFields.includes(key))
    throw fail(`executor.${key}`, `applies to kind: ${takers.join(', ')} only`, `drop it, or write kind: ${takers[0]}`)
  }
  return executor.readRecipeOptions(data, fail)
}
