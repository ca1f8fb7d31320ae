/**
 * Starting generation n+1 of a Run id whose generation n is terminal: the
 * launch's part, called under the Run's lock once the launch was validated
 * (launch.ts). Archives generation n (runs/generation-move.ts) and carries over what belongs
 * to the Run id rather than to one generation: the generations still owed to
 * the owner's `wait`.
 */
import type {RunMeta} from '../../base/records/run.js'
import {readRunResult, writeNewRunLocked} from '../../kernel/runs/store.js'
import {owedAfterArchive} from '../../kernel/runs/generation-delivery.js'
import {generationOf, generationToArchive} from '../../base/records/generation-layout.js'
import {completeMoveLocked} from '../../kernel/runs/generation-move.js'
import {appendInboxRecord} from '../../kernel/runs/inbox.js'

/**
 * Archive the terminal generation `current` of the Run in `dir` and write the
 * run.json `build(n+1)` returns. Caller holds the Run's lock. Returns the new meta.
 */
export function startGenerationLocked(
  home: string,
  dir: string,
  current: RunMeta,
  build: (generation: number) => RunMeta,
): RunMeta {
  current = completeMoveLocked(dir, current)
  // A result written without its mirror in run.json (a crash in between) still says how the generation ended.
  const result = readRunResult(dir, current)
  const recorded: RunMeta =
    result && current.status !== result.status
      ? {...current, status: result.status, ended_at: result.completed_at, exit_code: result.exit_code}
      : current
  // Numbered from the archive when run.json's own number is no whole number past it (never an existing archive's).
  const ended: RunMeta = {...recorded, generation: generationToArchive(dir, recorded)}
  const next = build(generationOf(ended) + 1)
  const owed = owedAfterArchive(dir, ended)
  if (owed.length) next.unreported_generations = owed
  // The owed generations keep their own markers (<run>@<instance>) until they are reported.
  writeNewRunLocked(home, dir, next, ended)
  // The message that resumes the Run is its new generation's first inbox record, there before the command starts.
  if (next.message)
    appendInboxRecord(dir, {
      id: next.message.id,
      message: next.message.text,
      generation: generationOf(next),
      via: 'resume',
    })
  return next
}
