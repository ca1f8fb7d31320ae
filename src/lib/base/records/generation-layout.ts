/**
 * Where a Run's generations live (SPEC: Generations and steering). The
 * current generation's own files sit at the top of the state dir; each
 * earlier generation n was moved to `generations/<n>/` when n+1 started.
 * Files the command wrote itself, `children.jsonl` and `inbox.jsonl` belong
 * to the Run id and stay at the top.
 */
import {readdirSync} from 'node:fs'
import {join} from 'node:path'
import {ActorsError, EXIT, usageError} from '../platform/errors.js'
import {runGeneration, type RunMeta} from './run.js'

/** A generation's own files: what moves to `generations/<n>/` (run.json last, see runs/generation-move.ts). */
export const GENERATION_FILES = [
  'result.json',
  'trace.jsonl',
  // Says the Trace beside it holds a waking attention event (runs/trace.ts attentionFlagged).
  'attention.flag',
  'controls.jsonl',
  'stdout.log',
  'stderr.log',
  'usage.json',
  'control-endpoint.json',
  'inbox-cursor.json',
  'inbox-stdin.json',
  // Whether this generation was reported to its owner (reported.ts): an archived generation keeps its own mark.
  'reported.json',
] as const

/**
 * The highest generation number: nine digits, what `RUN@N` can name. A
 * directory under generations/ named past it (or with a leading zero, or
 * past what a double holds exactly: 2^53 + 1 read as 2^53) is no generation.
 */
export const MAX_GENERATION = 999_999_999
const GENERATION_NAME = /^[1-9]\d{0,8}$/

export function generationsDir(dir: string): string {
  return join(dir, 'generations')
}

/** The directory holding earlier generation `n`'s files. */
export function archivedGenerationDir(dir: string, n: number): string {
  return join(generationsDir(dir), String(n))
}

/** A Run's generation number: run.json `generation`, absent (state of earlier versions) = 1 (records/run.ts runGeneration). */
export function generationOf(meta: Pick<RunMeta, 'generation'>): number {
  return runGeneration(meta)
}

/** The numbers of the archived generations in `dir`, ascending (staging, stale and misnamed dirs are skipped). */
export function archivedGenerations(dir: string): number[] {
  let names: string[]
  try {
    names = readdirSync(generationsDir(dir))
  } catch {
    return []
  }
  return names
    .filter((name) => GENERATION_NAME.test(name))
    .map(Number)
    .sort((a, b) => a - b)
}

/**
 * The number the generation at the top of `dir` is archived under when the
 * next one starts: run.json's `generation` when it is a whole number above
 * every archived one, else the one after the highest archived. run.json is
 * the Run's to write: a `generation` of 1e308, "../x" or 2.5 (read as 1) once
 * replaced the real generations/1 with the current generation's files. No
 * number past MAX_GENERATION: a Run there (a neighbour can make
 * generations/999999999) is refused (exit 1) rather than archived under a
 * name the next rerun would not see, and replace.
 */
export function generationToArchive(dir: string, meta: Pick<RunMeta, 'generation'>): number {
  const highest = archivedGenerations(dir).at(-1) ?? 0
  const claimed = meta.generation
  if (Number.isSafeInteger(claimed) && (claimed as number) > highest && (claimed as number) <= MAX_GENERATION)
    return claimed as number
  if (highest < MAX_GENERATION) return highest + 1
  throw new ActorsError(
    `${archivedGenerationDir(dir, highest)}: a Run has at most ${MAX_GENERATION} generations, so no new one can start`,
    EXIT.failed,
    `move that directory out of ${generationsDir(dir)} if nothing of it is yours, or launch under a new name`,
  )
}

/** `build@3` → {ref: 'build', generation: 3}; a plain ref has no generation. `@0`, `@x`, `@` are refused (exit 2). */
export function parseGenerationRef(ref: string): {ref: string; generation?: number} {
  const at = ref.lastIndexOf('@')
  // An '@' in a directory above the state dir is part of the path, not a generation.
  if (at < 0 || at < ref.lastIndexOf('/')) return {ref}
  const base = ref.slice(0, at)
  const number = ref.slice(at + 1)
  if (!GENERATION_NAME.test(number) || base === '') {
    throw usageError(
      `${JSON.stringify(ref)} does not name a generation`,
      'write RUN@N with N a generation number from 1, e.g. build@2 (list them with `actors inspect RUN --generations`)',
    )
  }
  return {ref: base, generation: Number(number)}
}

/** How views name a Run: `build`, or `build#3` from generation 2 on. */
export function displayRunName(run: string, generation: number | undefined): string {
  return generation !== undefined && generation > 1 ? `${run}#${generation}` : run
}
