/**
 * Reading a Run's generations: `inspect RUN --generations` and `RUN@N` in
 * `inspect` and `logs` (SPEC: Generations and steering).
 */
import {notFoundError} from '../../base/platform/errors.js'
import {resolveRunRef} from '../../base/platform/home.js'
import {readRunMetaRaw, readRunResult, requireRun, type RunState} from './store.js'
import {isTerminal} from '../../base/records/run.js'
import {
  archivedGenerationDir,
  archivedGenerations,
  generationOf,
  parseGenerationRef,
} from '../../base/records/generation-layout.js'

export interface GenerationRow {
  generation: number
  run_instance_id: string
  status: string
  started_at: string | null
  ended_at: string | null
  exit_code: number | null
  /** Where this generation's own files are. */
  dir: string
  current: boolean
}

export interface GenerationListing {
  run: string
  current: number
  generations: GenerationRow[]
}

function row(state: RunState, current: boolean): GenerationRow {
  const {meta, result} = state
  return {
    generation: generationOf(meta),
    run_instance_id: meta.run_instance_id,
    status: meta.status,
    started_at: meta.started_at ?? null,
    ended_at: result?.completed_at ?? (meta.ended_at as string | undefined) ?? null,
    exit_code: result?.exit_code ?? (meta.exit_code as number | undefined) ?? null,
    dir: state.dir,
    current,
  }
}

/** Generation `n` as it was archived, read as is (an archive is never reconciled or written to). */
function readArchived(dir: string, n: number): RunState | undefined {
  const archive = archivedGenerationDir(dir, n)
  const meta = readRunMetaRaw(archive)
  if (!meta) return undefined
  const result = readRunResult(archive, meta)
  return {dir: archive, meta: result && !isTerminal(meta.status) ? {...meta, status: result.status} : meta, result}
}

/** Every generation of the Run `ref`, oldest first; the current one last. */
export function listGenerations(home: string, ref: string): GenerationListing {
  const state = requireRun(home, resolveRunRef(home, parseGenerationRef(ref).ref))
  const current = generationOf(state.meta)
  const rows: GenerationRow[] = []
  for (const n of archivedGenerations(state.dir)) {
    if (n >= current) continue
    try {
      const archived = readArchived(state.dir, n)
      if (archived) rows.push(row(archived, false))
    } catch {}
  }
  rows.push(row(state, true))
  return {run: state.meta.run, current, generations: rows}
}

/**
 * The Run `ref` names: its current generation, or with `RUN@N` generation N
 * (exit 2 for a malformed N, 4 for one that does not exist).
 */
export function requireGeneration(home: string, ref: string): RunState {
  const parsed = parseGenerationRef(ref)
  const state = requireRun(home, resolveRunRef(home, parsed.ref))
  const current = generationOf(state.meta)
  if (parsed.generation === undefined || parsed.generation === current) return state
  const archived = parsed.generation < current ? readArchived(state.dir, parsed.generation) : undefined
  if (!archived) {
    throw notFoundError(
      `Run ${state.meta.run} has no generation ${parsed.generation} (current: ${current})`,
      `list them with actors inspect ${state.meta.run} --generations`,
    )
  }
  return archived
}
