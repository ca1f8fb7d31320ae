/**
 * Finding an earlier generation still owed to its owner by its instance id.
 * run.json's `unreported_generations` (written when a generation is archived,
 * launch/generation-start.ts) names them, so a lookup reads only those archives,
 * never a Run's whole history. Kept apart from generation-delivery.ts so reported.ts and
 * history/indexed-instance.ts can use it without an import cycle.
 */
import {join} from 'node:path'
import {readJsonFile} from '../../base/platform/state-files.js'
import type {RunMeta} from '../../base/records/run.js'
import {archivedGenerationDir} from '../../base/records/generation-layout.js'

export interface OwedGeneration {
  generation: number
  run_instance_id: string
}

/** The owed generations `meta` (a Run's current run.json) lists; malformed entries are skipped. */
export function owedGenerations(meta: RunMeta): OwedGeneration[] {
  const owed = Array.isArray(meta.unreported_generations) ? (meta.unreported_generations as OwedGeneration[]) : []
  return owed.filter(
    (g) => g && Number.isInteger(g.generation) && g.generation >= 1 && typeof g.run_instance_id === 'string',
  )
}

/**
 * The archived generation of the Run in `dir` (current run.json `meta`) whose
 * instance is `instance`, when run.json lists it as owed; undefined when it is
 * not listed, or its archive is missing or damaged.
 */
export function readOwedArchive(
  dir: string,
  meta: RunMeta,
  instance: string,
): {dir: string; meta: RunMeta} | undefined {
  const owed = owedGenerations(meta).find((g) => g.run_instance_id === instance)
  if (!owed) return undefined
  const archive = archivedGenerationDir(dir, owed.generation)
  try {
    const archived = readJsonFile<RunMeta>(join(archive, 'run.json'))
    if (archived && archived.run_instance_id === instance && archived.run === meta.run)
      return {dir: archive, meta: archived}
  } catch {}
  return undefined
}
