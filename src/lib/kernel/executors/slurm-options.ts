/**
 * The Slurm options of a Recipe's `executor: {kind: slurm, ...}` (SPEC:
 * Executors): the `sbatch` settings a Recipe or a site may give a Slurm
 * Run, validated before anything is created.
 */
import type {ActorsError} from '../../base/platform/errors.js'
import {parseDuration} from '../../base/platform/duration.js'
import {shellSplit} from '../../base/platform/shell-split.js'
import type {FieldFail} from './executor.js'

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

export const SLURM_FIELDS = ['partition', 'time', 'cpus', 'mem', 'gres', 'account', 'sbatch_args'] as const

const TEXT_OPTIONS = ['partition', 'mem', 'gres', 'account'] as const

/** Validate the Slurm options of a Recipe's `executor` mapping (its fields are known to be Slurm's). */
export function readSlurmOptions(data: Record<string, unknown>, fail: FieldFail): SlurmOptions {
  const options: SlurmOptions = {}
  for (const field of TEXT_OPTIONS) {
    const v = data[field]
    if (v === undefined) continue
    if ((typeof v !== 'string' && typeof v !== 'number') || String(v).trim() === '' || /\s/.test(String(v))) {
      throw fail(
        `executor.${field}`,
        `${JSON.stringify(v)} is not a single word`,
        `write ${field}: VALUE, as you would pass it to sbatch --${field}`,
      )
    }
    options[field] = String(v)
  }
  if (data.cpus !== undefined) {
    if (typeof data.cpus !== 'number' || !Number.isInteger(data.cpus) || data.cpus < 1) {
      throw fail('executor.cpus', `${JSON.stringify(data.cpus)} is not a whole number of CPUs`, 'write cpus: 2')
    }
    options.cpus = data.cpus
  }
  if (data.time !== undefined) options.time = readTime(data.time, fail)
  if (data.sbatch_args !== undefined) options.sbatch_args = readSbatchArgs(data.sbatch_args, fail)
  return options
}

function readTime(value: unknown, fail: FieldFail): string | number {
  try {
    if (typeof value !== 'string' && typeof value !== 'number') throw new Error()
    if (parseDuration(value, 'executor.time') <= 0) throw new Error()
  } catch (error) {
    throw fail(
      'executor.time',
      `${JSON.stringify(value)} is not a duration`,
      (error as ActorsError).fix ?? 'use 30s, 5m, 1h or a number of seconds (Slurm rounds up to whole minutes)',
    )
  }
  return value
}

function readSbatchArgs(value: unknown, fail: FieldFail): string[] {
  let words: unknown[]
  if (typeof value === 'string') {
    try {
      words = shellSplit(value)
    } catch (error) {
      throw fail(
        'executor.sbatch_args',
        `cannot be split into words: ${(error as Error).message}`,
        'close every quote, or write a list of words',
      )
    }
  } else if (Array.isArray(value)) {
    words = value
  } else {
    throw fail(
      'executor.sbatch_args',
      'is not a list of words',
      'write sbatch_args: ["--qos=short", "--constraint=avx2"]',
    )
  }
  return words.map((word) => {
    if (typeof word !== 'string' && typeof word !== 'number')
      throw fail('executor.sbatch_args', `word ${JSON.stringify(word)} is not a string`, 'write every word as a string')
    return String(word)
  })
}
