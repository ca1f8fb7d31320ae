/**
 * Earlier generations in completion batches (SPEC: an unreported terminal of
 * an earlier generation is still delivered). A generation's `reported.json`
 * moves with it into generations/<n>/ (records/generation-layout.ts), so an archived generation
 * keeps its own reported mark; when a generation is archived, the next one's
 * run.json lists the archived generations not reported yet
 * (`unreported_generations`), and each keeps its run index marker
 * (`<run>@<instance>`) until it is reported, so `wait` reads only those
 * archives, never every Run's history (history/live-index.ts).
 */
import {isReported} from './reported.js'
import type {RunMeta} from '../../base/records/run.js'
import {archivedGenerationDir, generationOf} from '../../base/records/generation-layout.js'
import {owedGenerations, type OwedGeneration} from './generation-owed.js'

/**
 * The generations the owner is still owed once `current` (terminal; its files
 * still at the top of `dir`) is archived: those it already owed, less the ones
 * reported since, plus `current` itself unless it was reported or is silent.
 */
export function owedAfterArchive(dir: string, current: RunMeta): OwedGeneration[] {
  const owed = owedGenerations(current).filter(
    (g) => !isReported(archivedGenerationDir(dir, g.generation), g.run_instance_id),
  )
  if (current.notification !== 'silent' && !isReported(dir, current.run_instance_id)) {
    owed.push({generation: generationOf(current), run_instance_id: current.run_instance_id})
  }
  return owed
}
