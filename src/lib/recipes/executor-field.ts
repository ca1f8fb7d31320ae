/**
 * Where a Run's supervisor runs (SPEC: Executors): `local` (a detached process
 * on this machine) or `slurm` (a batch job). Chosen by `run --on`, else the
 * Recipe's `executor` field, else `ACTORS_EXECUTOR`, else local; every source
 * is validated before anything is created.
 */
import {usageError, type ActorsError} from '../platform/errors.js'
import {parseDuration} from '../platform/duration.js'
import {didYouMean} from '../platform/did-you-mean.js'
import {shellSplit} from '../platform/shell-split.js'

export const EXECUTOR_KINDS = ['local', 'slurm'] as const
export type ExecutorKind = (typeof EXECUTOR_KINDS)[number]

/** The `sbatch` options a Recipe (or a site) may set for a Slurm Run. */
export interface SlurmOptions {
  partition?: string
  /** The job's time limit as a duration (`30m`); default: from the Run's timeout, else the partition's. */
  time?: string | number
  cpus?: number
  /** sbatch --mem, e.g. `4G`. */
  mem?: string
  /** sbatch --gres, e.g. `gpu:1`. */
  gres?: string
  account?: string
  /** Further sbatch arguments, passed as they are (never through a shell). */
  sbatch_args?: string[]
}

/** A local Run launched inside a Slurm job records that job: it lives on the job's node, and no longer than the job. */
export type ExecutorChoice = {kind: 'local'; slurm_job_id?: string} | ({kind: 'slurm'} & SlurmOptions)

export const EXECUTOR_FIELDS = ['kind', 'partition', 'time', 'cpus', 'mem', 'gres', 'account', 'sbatch_args'] as const

/** Validate an executor name given by `--on` or ACTORS_EXECUTOR (exit 2 naming the value and the fix). */
export function parseExecutorKind(value: string, source: string): ExecutorKind {
  if ((EXECUTOR_KINDS as readonly string[]).includes(value)) return value as ExecutorKind
  throw usageError(
    `${source} ${JSON.stringify(value.slice(0, 80))} is not an executor`,
    `${didYouMean(value, EXECUTOR_KINDS)}use ${source === '--on' ? '--on local or --on slurm' : `${source}=local or ${source}=slurm`}`,
    {executor: value, executors: [...EXECUTOR_KINDS]},
  )
}

/**
 * The executor of a launch: `--on` wins, then the Recipe's `executor`, then
 * ACTORS_EXECUTOR. A kind chosen by flag or environment keeps the Recipe's
 * Slurm options when the Recipe also says slurm.
 */
export function chooseExecutor(flag: string | undefined, recipe: ExecutorChoice | undefined, env: NodeJS.ProcessEnv = process.env): ExecutorChoice {
  const fromEnv = env.ACTORS_EXECUTOR ? parseExecutorKind(env.ACTORS_EXECUTOR, 'ACTORS_EXECUTOR') : undefined
  const kind = flag !== undefined ? parseExecutorKind(flag, '--on') : (recipe?.kind ?? fromEnv ?? 'local')
  if (kind === 'local') return env.SLURM_JOB_ID ? {kind: 'local', slurm_job_id: env.SLURM_JOB_ID} : {kind: 'local'}
  return recipe?.kind === 'slurm' ? recipe : {kind: 'slurm'}
}

type Fail = (field: string, problem: string, fix: string) => ActorsError

const TEXT_OPTIONS = ['partition', 'mem', 'gres', 'account'] as const

/** Validate a Recipe's `executor` field (already parsed from YAML/JSON). */
export function readRecipeExecutor(value: unknown, fail: Fail): ExecutorChoice {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw fail('executor', 'is not a mapping', 'write executor: {kind: slurm, partition: NAME, time: 30m, cpus: 2}')
  }
  const data = value as Record<string, unknown>
  for (const key of Object.keys(data)) {
    if (!(EXECUTOR_FIELDS as readonly string[]).includes(key)) {
      throw fail(`executor.${key}`, 'is not an executor field', `${didYouMean(key, EXECUTOR_FIELDS)}allowed: ${EXECUTOR_FIELDS.join(', ')}`)
    }
  }
  if (data.kind !== 'local' && data.kind !== 'slurm') {
    throw fail(
      'executor.kind',
      data.kind === undefined ? 'is missing' : `${JSON.stringify(data.kind)} is not local or slurm`,
      'write kind: slurm (or kind: local)',
    )
  }
  if (data.kind === 'local') {
    const extra = Object.keys(data).filter((k) => k !== 'kind')
    if (extra.length) throw fail(`executor.${extra[0]}`, 'applies to kind: slurm only', 'drop it, or write kind: slurm')
    return {kind: 'local'}
  }
  const choice: ExecutorChoice = {kind: 'slurm'}
  for (const field of TEXT_OPTIONS) {
    const v = data[field]
    if (v === undefined) continue
    if ((typeof v !== 'string' && typeof v !== 'number') || String(v).trim() === '' || /\s/.test(String(v))) {
      throw fail(`executor.${field}`, `${JSON.stringify(v)} is not a single word`, `write ${field}: VALUE, as you would pass it to sbatch --${field}`)
    }
    choice[field] = String(v)
  }
  if (data.cpus !== undefined) {
    if (typeof data.cpus !== 'number' || !Number.isInteger(data.cpus) || data.cpus < 1) {
      throw fail('executor.cpus', `${JSON.stringify(data.cpus)} is not a whole number of CPUs`, 'write cpus: 2')
    }
    choice.cpus = data.cpus
  }
  if (data.time !== undefined) {
    try {
      if (typeof data.time !== 'string' && typeof data.time !== 'number') throw new Error()
      if (parseDuration(data.time, 'executor.time') <= 0) throw new Error()
    } catch (error) {
      throw fail(
        'executor.time',
        `${JSON.stringify(data.time)} is not a duration`,
        (error as ActorsError).fix ?? 'use 30s, 5m, 1h or a number of seconds (Slurm rounds up to whole minutes)',
      )
    }
    choice.time = data.time as string | number
  }
  if (data.sbatch_args !== undefined) choice.sbatch_args = readSbatchArgs(data.sbatch_args, fail)
  return choice
}

function readSbatchArgs(value: unknown, fail: Fail): string[] {
  let words: unknown[]
  if (typeof value === 'string') {
    try {
      words = shellSplit(value)
    } catch (error) {
      throw fail('executor.sbatch_args', `cannot be split into words: ${(error as Error).message}`, 'close every quote, or write a list of words')
    }
  } else if (Array.isArray(value)) {
    words = value
  } else {
    throw fail('executor.sbatch_args', 'is not a list of words', 'write sbatch_args: ["--qos=short", "--constraint=avx2"]')
  }
  return words.map((word) => {
    if (typeof word !== 'string' && typeof word !== 'number')
      throw fail('executor.sbatch_args', `word ${JSON.stringify(word)} is not a string`, 'write every word as a string')
    return String(word)
  })
}
