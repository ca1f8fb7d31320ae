/**
 * The run index (`$ACTORS_HOME/index/`): which Runs the live commands must
 * look at, so `wait`, `inspect --status running`, singleton checks and the
 * live views cost what is live or unreported, not what is history.
 *
 * One empty marker file per Run instance that is live, or finished and not
 * yet reported to its owner, in one of two forms:
 *
 * - `<run>@<instance>` (a "live" marker): made with the Run's run.json, by
 *   one store call under the Run's lock, before run.json exists, so before
 *   the Run can end (runs/index-entry.ts). Live commands read every one of these.
 * - `~<ended_at>~<owner tag>~<root tag>~<run>@<instance>` (a "queued"
 *   marker), in the owner's queue directory `index/queue/<owner tag>/`
 *   (index-queue.ts): a finished, unreported instance in the delivery
 *   queue, where commands about what is live never look. A reader
 *   that finds a live marker of a finished, unreported instance renames it to
 *   this form (one atomic rename: the entry is under one name or the other,
 *   never neither). Sorting the names gives the delivery order (end time, run
 *   id, instance: the order of completion batches) and the tags (hashes of
 *   the owner and of the tree's root Run) let a `wait` pick its owner's
 *   oldest entries and the rest of their trees from a directory listing,
 *   reading only the state dirs it delivers (RunIndexReader).
 *
 * A marker is removed only once its instance is proven to need nothing
 * (terminal and reported, or silent; or its state dir is gone). Because each
 * entry is its own file named by a unique instance, concurrent writers never
 * rewrite a shared document and a relaunch can never have its marker removed
 * on behalf of an earlier instance: no entry is lost.
 *
 * The state dirs stay the truth; the index is a cache of them. Every entry is
 * re-read from its state dir on use (a hand-edited run.json is seen, and a
 * queued marker whose name no longer matches is renamed), and the stamp
 * (`.stamp.json`: runs/'s mtime, link count and number of entries, kept
 * current by every launch and prune under the index lock) tells when runs/
 * changed behind the kernel's back: a state dir copied in or restored, or the
 * index missing, damaged or foreign. Then the index is rebuilt from every
 * state dir, once.
 *
 * This module holds the index directory itself: its lock, the stamp of
 * runs/, and the claiming and removing of state dir names under that lock.
 * The markers are index-markers.ts (a new Run's live one runs/index-entry.ts), the order of queued names
 * index-queue-order.ts, what an entry stands for indexed-instance.ts, the
 * readers index-reader.ts and the rebuild index-rebuild.ts.
 */
import {readdirSync, statSync} from 'node:fs'
import {claimPrivateDir, makePrivateDir, refuseLinkedDir} from '../../base/platform/private-files.js'
import {join, sep} from 'node:path'
import {indexDir, runsDir} from '../../base/platform/home.js'
import {appendLaunch, compactLaunchLog} from './launch-log.js'
import {withLockSync} from '../../base/platform/file-lock.js'
import {listRunIds} from '../runs/store.js'
import {readJsonFile, unlinkQuietly, writeFileAtomic} from '../../base/platform/state-files.js'

// v3: queued markers moved from index/ into index/queue/<owner tag>/ (a v2 index is rebuilt, its queued markers moved).
const INDEX_SCHEMA = 'actors-index-v3'
const STAMP_FILE = '.stamp.json'
const LOCK_FILE = '.lock'

/** The stamp of runs/ the index was last known to cover (`.stamp.json`). */
export interface Stamp {
  schema: typeof INDEX_SCHEMA
  runs_mtime_ns: string
  runs_nlink: number
  /** State dirs in runs/ (dot-names excepted; a link is none) when the stamp was written. */
  runs_count: number
}

type RunsDirStat = {mtime: string; nlink: number}

/** runs/'s mtime and link count, or undefined when there is no runs/ (the index's view of whether it changed). */
export function statRuns(home: string): RunsDirStat | undefined {
  try {
    const stat = statSync(runsDir(home), {bigint: true})
    return {mtime: String(stat.mtimeNs), nlink: Number(stat.nlink)}
  } catch {
    return undefined
  }
}

/** The stamp, or undefined when it is missing, damaged or foreign (then the index is rebuilt). */
export function readStamp(home: string): Stamp | undefined {
  try {
    const stamp = readJsonFile<Stamp>(join(indexDir(home), STAMP_FILE), {schema: INDEX_SCHEMA, maxBytes: 4096})
    if (
      stamp &&
      typeof stamp.runs_mtime_ns === 'string' &&
      Number.isInteger(stamp.runs_nlink) &&
      Number.isInteger(stamp.runs_count)
    )
      return stamp
  } catch {}
  // Missing, damaged or foreign: never trusted, the index is rebuilt.
  return undefined
}

/** Record that the index covers runs/ as `runs` and `count` entries of it. */
export function writeStamp(home: string, runs: RunsDirStat, count: number): void {
  const stamp: Stamp = {schema: INDEX_SCHEMA, runs_mtime_ns: runs.mtime, runs_nlink: runs.nlink, runs_count: count}
  writeFileAtomic(join(indexDir(home), STAMP_FILE), JSON.stringify(stamp) + '\n', {durable: false})
}

/** Whether runs/ is as `stamp` recorded it (nothing changed it behind the kernel's back). */
export const unchanged = (stamp: Stamp, runs: RunsDirStat | undefined) =>
  runs !== undefined && stamp.runs_mtime_ns === runs.mtime && stamp.runs_nlink === runs.nlink

/** Run `fn` under the run index's lock (launches, prunes, rebuilds and queue renewal serialise here). */
export function withIndexLock<T>(home: string, fn: () => T): T {
  makePrivateDir(indexDir(home))
  // A rebuild of a large root holds the lock for a while: wait for it rather than fail a launch.
  return withLockSync(join(indexDir(home), LOCK_FILE), fn, {timeoutMs: 120_000})
}

/**
 * Change runs/ itself (`change` makes or moves away one Run dir, returning
 * how many entries it added: 1, 0 or -1) under the index lock, keeping the
 * stamp current: when the stamp matched runs/ before, it matches after; when
 * it did not (something changed runs/ behind the kernel's back), it stays
 * stale so the next reader looks.
 */
function changeRunsDir<T>(home: string, change: () => {value: T; added: number}): T {
  return withIndexLock(home, () => {
    const stamp = readStamp(home)
    const before = statRuns(home)
    const {value, added} = change()
    if (stamp && added !== 0) {
      const after = unchanged(stamp, before) ? statRuns(home) : undefined
      try {
        writeStamp(home, after ?? {mtime: stamp.runs_mtime_ns, nlink: stamp.runs_nlink}, stamp.runs_count + added)
      } catch {
        // runs/ has changed already (a full disk refused the stamp): never fail the change for its cache; without
        // a stamp the next reader rebuilds the index. (An unlink frees space, so it works on a full disk.)
        unlinkQuietly(join(indexDir(home), STAMP_FILE))
      }
    }
    return value
  })
}

/**
 * Claim the state dir of a launch: mkdir `runs/<id>` (fresh: true) or find
 * it there (an existing id), and log the launch (launch-log.ts). One short
 * critical section per launch.
 */
export function claimRunDirName(home: string, id: string): {dir: string; fresh: boolean} {
  const dir = runsDir(home) + sep + id
  return changeRunsDir(home, () => {
    let fresh = false
    try {
      claimPrivateDir(dir)
      fresh = true
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
      // An existing id: a link in its place is damage, never launched into.
      refuseLinkedDir(dir)
    }
    appendLaunch(home, id)
    return {value: {dir, fresh}, added: fresh ? 1 : 0}
  })
}

/** Move the state dir of `id` out of runs/ (prune), through `moveAway`, keeping the stamp current. */
export function removeRunDirName(home: string, moveAway: () => void): void {
  changeRunsDir(home, () => {
    moveAway()
    return {value: undefined, added: -1}
  })
}

/**
 * After a prune: drop the launch log's lines of Runs no longer in runs/
 * (launch-log.ts), under the index lock that launches append under.
 */
export function compactLaunches(home: string): number {
  return withIndexLock(home, () => compactLaunchLog(home, new Set(listRunIds(home))))
}

/** The names in index/ (live markers, the stamp, the lock, the queue directory); none when it is missing. */
export function listIndex(home: string): string[] {
  try {
    return readdirSync(indexDir(home))
  } catch {
    return []
  }
}
