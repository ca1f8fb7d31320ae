/**
 * Earlier generations in completion batches (SPEC: an unreported terminal of
 * an earlier generation is still delivered). When a generation is archived,
 * the next one's run.json lists the archived generations its owner has not
 * been given yet (`unreported_generations`), so `wait` reads only those
 * archives, never every Run's history.
 */
import {join} from 'node:path'
import {isPlainName} from '../home.js'
import {readJsonFile} from '../state-files.js'
import type {RunMeta} from '../run-types.js'
import {archivedGenerationDir, generationOf} from './layout.js'

export interface OwedGeneration {
  generation: number
  run_instance_id: string
}

/** The part of the owner's delivery journal this needs (read without its lock: it is replaced atomically). */
interface JournalView {
  reported?: Record<string, string>
  reported_archived?: Record<string, string[]>
  pending?: Array<{members?: Array<{run?: string; run_instance_id?: string}>}>
}

/** Whether the owner's journal says `instance` of `run` was reported, or is being printed by a live wait. */
export function isReportedIn(journal: JournalView, run: string, instance: string): boolean {
  if (journal.reported?.[run] === instance) return true
  if (journal.reported_archived?.[run]?.includes(instance)) return true
  return (journal.pending ?? []).some((batch) => (batch.members ?? []).some((m) => m.run === run && m.run_instance_id === instance))
}

function readJournalView(home: string, owner: string): JournalView {
  if (!isPlainName(owner)) return {}
  try {
    return readJsonFile<JournalView>(join(home, 'delivery', `${owner}.json`), {maxBytes: 32 * 1024 * 1024}) ?? {}
  } catch {
    return {}
  }
}

/**
 * The generations the owner is still owed once `current` (terminal) is
 * archived: those it already owed, less the ones delivered since, plus
 * `current` itself unless it was reported or is silent.
 */
export function owedAfterArchive(home: string, current: RunMeta): OwedGeneration[] {
  const journal = readJournalView(home, current.owner)
  const earlier = Array.isArray(current.unreported_generations) ? (current.unreported_generations as OwedGeneration[]) : []
  const owed = earlier.filter((g) => g && typeof g.run_instance_id === 'string' && !isReportedIn(journal, current.run, g.run_instance_id))
  if (current.notification !== 'silent' && !isReportedIn(journal, current.run, current.run_instance_id)) {
    owed.push({generation: generationOf(current), run_instance_id: current.run_instance_id})
  }
  return owed
}

/** The archived generations `meta`'s Run still owes, read from their archives (damaged or missing ones are skipped). */
export function readOwedGenerations(dir: string, meta: RunMeta): Array<{dir: string; meta: RunMeta}> {
  const owed = Array.isArray(meta.unreported_generations) ? (meta.unreported_generations as OwedGeneration[]) : []
  const out: Array<{dir: string; meta: RunMeta}> = []
  for (const g of owed) {
    if (!g || !Number.isInteger(g.generation)) continue
    const archive = archivedGenerationDir(dir, g.generation)
    try {
      const archived = readJsonFile<RunMeta>(join(archive, 'run.json'))
      if (archived && archived.run_instance_id === g.run_instance_id) out.push({dir: archive, meta: archived})
    } catch {}
  }
  return out
}
