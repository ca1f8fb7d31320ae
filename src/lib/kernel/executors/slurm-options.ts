/**
 * The Slurm options of a Recipe's `executor: {kind: slurm, ...}` (SPEC:
 * Executors): the `sbatch` settings a Recipe or a site may give a Slurm
 * Run, validated before anything is created.
 */
import type {ActorsError} from '../../base/platform/errors.js'
import {parseDuration} from '../../base/platform/duration.js'
import {shellSplit} from '../../base/platform/shell-split.js'
import {type Ctx, refuse, says, saysBy, show} from '../../base/platform/zod-issues.js'
import type {Zod} from '../../base/platform/zod.js'

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

const TIME_FIX = 'use 30s, 5m, 1h or a number of seconds (Slurm rounds up to whole minutes)'

/** The schema of each Slurm option of a Recipe's `executor` mapping, in the order messages list them. */
export function slurmOptionsSchema(z: Zod) {
  const word = (field: string) => {
    const bad = says(
      (v) => `${show(v)} is not a single word`,
      `write ${field}: VALUE, as you would pass it to sbatch --${field}`,
    )
    return z.optional(z.pipe(z.union([z.string().check(z.regex(/^\S+$/, bad)), z.number()], bad), z.transform(String)))
  }
  const cpus = says((v) => `${show(v)} is not a whole number of CPUs`, 'write cpus: 2')
  const notDuration = (v: unknown) => `${show(v)} is not a duration`
  const words = saysBy((v) =>
    Array.isArray(v)
      ? {
          problem: `word ${show(v.find((w) => !['string', 'number'].includes(typeof w)))} is not a string`,
          fix: 'write every word as a string',
        }
      : {problem: 'is not a list of words', fix: 'write sbatch_args: ["--qos=short", "--constraint=avx2"]'},
  )
  return {
    partition: word('partition'),
    time: z.optional(
      z.union([z.string(), z.number()], says(notDuration, TIME_FIX)).check(
        z.superRefine((v: string | number, ctx: Ctx) => {
          let fix = TIME_FIX
          try {
            if (parseDuration(v, 'executor.time') > 0) return
          } catch (error) {
            fix = (error as ActorsError).fix ?? fix
          }
          refuse(ctx, {problem: notDuration(v), fix})
        }),
      ),
    ),
    cpus: z.optional(z.int(cpus).check(z.gte(1, cpus))),
    mem: word('mem'),
    gres: word('gres'),
    account: word('account'),
    sbatch_args: z.optional(
      z.pipe(
        z.union([z.string(), z.array(z.union([z.string(), z.number()]))], words),
        z.transform((v, ctx) => {
          if (Array.isArray(v)) return v.map(String)
          try {
            return shellSplit(v)
          } catch (error) {
            const problem = `cannot be split into words: ${(error as Error).message}`
            refuse(ctx, {problem, fix: 'close every quote, or write a list of words'})
            return z.NEVER
          }
        }),
      ),
    ),
  }
}
