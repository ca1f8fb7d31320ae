/**
 * Moving a finished generation out of the way of the next one, crash-safe
 * (SPEC: Generations and steering): a crash at any point leaves either the
 * old layout or the new one, never a mix a reader could see.
 *
 * Under the Run's lock:
 *  1. the old run.json is copied into a hidden staging dir
 *     `generations/.staging-<n>-...` (a crash here: old layout, plus hidden
 *     junk the next start removes);
 *  2. the new generation's run.json is written with a `generation_move` mark
 *     naming the staging dir: this rename is the commit point;
 *  3. the old generation's other files are renamed into the staging dir, the
 *     staging dir is renamed to `generations/<n>`, and run.json is rewritten
 *     without the mark.
 * A crash after 2 is finished by whoever reads the Run next (readRunState,
 * the supervisor's start, the next launch), before anything else looks at
 * the top-level files: the new layout.
 */
import {existsSync, readdirSync, renameSync, rmSync} from 'node:fs'
import {claimPrivateDir, makePrivateDir, refuseLinkedDir} from '../../base/platform/private-files.js'
import {basename, join} from 'node:path'
import {randomHex} from '../../base/platform/builtins.js'
import {corruptStateError} from '../../base/platform/errors.js'
import {withLockSync} from '../../base/platform/file-lock.js'
import {RUN_SCHEMA, type RunMeta} from '../../base/records/run.js'
import {readJsonFile, writeJsonAtomic} from '../../base/platform/state-files.js'
import {
  GENERATION_FILES,
  archivedGenerationDir,
  generationToArchive,
  generationsDir,
} from '../../base/records/generation-layout.js'
import {testHook, testHookPause} from '../../base/platform/test-hooks.js'

// Paths spelled out here (not through runs/store.ts, which calls completeMove: no import cycle).
const metaFile = (dir: string) => join(dir, 'run.json')
const runLock = (dir: string) => join(dir, '.lock')

/** The mark run.json carries between the commit and the end of a move. */
export interface GenerationMoveMark {
  from: number
  staging: string
}

/**
 * Test-only: hold the move after staging and after the commit (only at the
 * stage the generationMoveAt hook names, when set), so a test can kill it
 * there (platform/test-hooks.ts).
 */
function testPause(stage: 'staged' | 'committed'): void {
  const at = testHook('generationMoveAt')
  if (at && at !== stage) return
  testHookPause('generationMoveDelayMs')
}

/**
 * Archive the terminal generation `current` of the Run in `dir` and make
 * `next` its run.json. Caller holds the Run's lock. `archived` fields are
 * added to the archived run.json (delivery bookkeeping).
 */
export function archiveAndStartLocked(
  dir: string,
  current: RunMeta,
  next: RunMeta,
  archived: Record<string, unknown> = {},
): void {
  // Never the field as it stands: a rewritten one named an existing archive (generation-layout.ts generationToArchive).
  const n = generationToArchive(dir, current)
  removeLeftovers(dir)
  const base = generationsDir(dir)
  try {
    makePrivateDir(base)
  } catch (error) {
    // A file or FIFO where generations/ belongs (a Run can plant one in its own dir): damage, named.
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') throw corruptStateError(base, 'is not a directory')
    throw error
  }
  // An archive of the current generation can only be left from a hand edit or a foreign copy: keep it aside, never merge into it.
  const clash = archivedGenerationDir(dir, n)
  if (existsSync(clash)) renameSync(clash, join(base, `.stale-${n}-${randomHex(3)}`))
  const staging = join(base, `.staging-${n}-${process.pid}-${randomHex(3)}`)
  claimPrivateDir(staging)
  writeJsonAtomic(join(staging, 'run.json'), {...current, generation: n, ...archived})
  testPause('staged')
  const mark: GenerationMoveMark = {from: n, staging: basename(staging)}
  writeJsonAtomic(metaFile(dir), {...next, generation_move: mark})
  testPause('committed')
  finishMoveLocked(dir, mark)
  writeJsonAtomic(metaFile(dir), next)
}

/** Step 3 of the move; every part may already have happened (a resumed recovery). */
function finishMoveLocked(dir: string, mark: GenerationMoveMark): void {
  const staging = join(generationsDir(dir), mark.staging)
  const target = archivedGenerationDir(dir, mark.from)
  if (existsSync(staging)) {
    for (const name of GENERATION_FILES) {
      try {
        renameSync(join(dir, name), join(staging, name))
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
      }
    }
    renameSync(staging, target)
  }
}

/** Staging dirs of moves that crashed before their commit hold only a copy of run.json: remove them. */
function removeLeftovers(dir: string): void {
  // Never list or remove through a link where generations/ belongs.
  refuseLinkedDir(generationsDir(dir))
  let names: string[]
  try {
    names = readdirSync(generationsDir(dir))
  } catch {
    return
  }
  for (const name of names)
    if (name.startsWith('.staging-')) rmSync(join(generationsDir(dir), name), {recursive: true, force: true})
}

/**
 * Finish a move that crashed after its commit (run.json carries the mark).
 * Caller holds the Run's lock. Returns the meta without the mark.
 */
export function completeMoveLocked(dir: string, meta: RunMeta): RunMeta {
  const mark = meta.generation_move as GenerationMoveMark | undefined
  if (!mark || typeof mark.staging !== 'string' || !mark.staging.startsWith('.staging-') || mark.staging.includes('/'))
    return meta
  finishMoveLocked(dir, mark)
  const next = {...meta}
  delete next.generation_move
  writeJsonAtomic(metaFile(dir), next)
  return next
}

/**
 * The same, taking the Run's lock (for readers that found the mark). Never
 * throws: a reader that cannot finish it (the mover is still at work, holding
 * the lock) just reads on.
 */
export function completeMove(dir: string): void {
  try {
    withLockSync(
      runLock(dir),
      () => {
        const meta = readJsonFile<RunMeta>(metaFile(dir), {schema: RUN_SCHEMA})
        if (meta?.generation_move) completeMoveLocked(dir, meta)
      },
      {timeoutMs: 2000},
    )
  } catch {}
}
