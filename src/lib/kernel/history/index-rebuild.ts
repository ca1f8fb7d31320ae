/**
 * Keeping the run index (live-index.ts) covering runs/: checking the stamp
 * and, when runs/ changed behind the kernel's back, rebuilding every marker
 * and the launch log from the state dirs, shared with a worker thread when
 * large (src/boot/index-worker.ts runs enterStateDirs on its share).
 */
import {existsSync, readdirSync} from 'node:fs'
import {join, sep} from 'node:path'
import {indexDir, isPlainName, runsDir} from '../../base/platform/home.js'
import {rewriteLaunchLog} from './launch-log.js'
import {recordReported} from '../runs/reported.js'
import {owedGenerations} from '../runs/generation-owed.js'
import {listRunIds, readRunMetaRaw} from '../runs/store.js'
import {enqueueMarker, markQueueChanged} from './index-queue.js'
import {readJsonFile, unlinkQuietly} from '../../base/platform/state-files.js'
import {isTerminal, type RunMeta} from '../../base/records/run.js'
import {indexWorkerScript} from '../../base/platform/package-root.js'
import {secondCoreAvailable, shareWork} from '../../base/platform/two-threads.js'
import {testHookNumber} from '../../base/platform/test-hooks.js'
import {listIndex, readStamp, statRuns, unchanged, withIndexLock, writeStamp} from './live-index.js'
import {addIndexMarker} from '../runs/index-entry.js'
import {ownerTag, parseMarker, queuedMarkerName, validMarker} from './index-markers.js'
import {JUST_READ_MAX, justRead, needsReport, readOwedInstance} from './indexed-instance.js'

/**
 * Make sure the index covers runs/: nothing to do while the stamp matches
 * runs/ (one stat); after a change made outside the kernel, count the
 * state dirs, and rebuild when the count says one appeared or vanished (or
 * the stamp is missing, damaged or foreign). An entry of runs/ that is no
 * directory (a link) is no state dir: never read, never indexed.
 */
export function refreshIndex(home: string): void {
  const stamp = readStamp(home)
  const now = statRuns(home)
  if (!now || (stamp && unchanged(stamp, now))) return
  withIndexLock(home, () => {
    const current = readStamp(home)
    // Taken before listing: a change made after it makes the next reader look again.
    const before = statRuns(home)
    if (!before || (current && unchanged(current, before))) return
    const names = listRunIds(home)
    if (!current || names.length !== current.runs_count) rebuildIndex(home, names)
    writeStamp(home, before, names.length)
  })
}

/** State dirs per chunk when a rebuild shares its work with a worker thread. */
const REBUILD_CHUNK = 256
/**
 * A rebuild of fewer state dirs stays on one thread: a worker takes tens of
 * milliseconds to start, about what a thousand state dirs take to read.
 */
const SHARED_REBUILD_MIN = 4096

/**
 * Rebuild from every state dir: a live marker for each live Run, a queued
 * marker for each finished, unreported one (existing markers stay: they are
 * re-checked on use), and the launch log. Runs a delivery journal of the
 * earlier format lists as reported get their reported.json, so an upgraded
 * state root does not report its history again. A large rebuild (a backup
 * restored, thousands of state dirs copied in) shares the state dirs with a
 * worker thread on a second core (platform/two-threads.ts; dist/index-worker.cjs).
 */
function rebuildIndex(home: string, names: string[]): void {
  const legacy = legacyReported(home)
  // The run.json stat cache of an earlier index format: no longer used.
  unlinkQuietly(join(indexDir(home), '.terminal.json'))
  // Queued markers of the earlier format, in index/ itself: every one is entered again below, in its owner's queue.
  for (const name of listIndex(home)) {
    const marker = parseMarker(name)
    if (marker?.queued && validMarker(marker)) unlinkQuietly(indexDir(home) + sep + name)
  }
  const found = newEnteredDirs()
  const job: RebuildJob = {home, names, legacy}
  shareWork<EnteredDirs>({
    count: names.length,
    chunkSize: REBUILD_CHUNK,
    runChunk: (start, end) => enterStateDirs(job, start, end, found, true),
    worker: shareRebuild(names.length) ? rebuildWorker(job) : undefined,
    merge: (theirs) => {
      for (const launch of theirs.launches) found.launches.push(launch)
      for (const tag of theirs.queues) found.queues.add(tag)
    },
  })
  // Once per queue, after its last marker (index-queue.ts).
  for (const tag of found.queues) markQueueChanged(home, tag)
  found.launches.sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0))
  rewriteLaunchLog(home, found.launches)
}

/** Whether a rebuild of `count` state dirs is shared with a worker thread. */
function shareRebuild(count: number): boolean {
  // Test-only: share small rebuilds too, on any machine (test/history.test.ts).
  const asked = testHookNumber('sharedRebuildMin')
  if (Number.isInteger(asked) && asked > 0) return count >= asked
  return count >= SHARED_REBUILD_MIN && secondCoreAvailable()
}

/** The worker thread a rebuild may share its state dirs with, when its bundle is there (dist/index-worker.cjs). */
function rebuildWorker(job: RebuildJob): {file: string; data: RebuildJob} | undefined {
  const file = indexWorkerScript()
  return existsSync(file) ? {file, data: job} : undefined
}

/**
 * What a rebuild works through: the state dirs of runs/ (`names`), and the
 * legacy journals' reported instances. A worker thread gets it (and sends
 * EnteredDirs back) as a structured clone, Map and Set included.
 */
export interface RebuildJob {
  home: string
  names: string[]
  legacy: Map<string, string>
}

/** What entering state dirs found: launch log lines, and the queues it added markers to (whose flags are raised after). */
export interface EnteredDirs {
  launches: Array<{at: string; id: string}>
  queues: Set<string>
}

/** An empty EnteredDirs, for a thread to enter its share of state dirs into. */
export function newEnteredDirs(): EnteredDirs {
  return {launches: [], queues: new Set()}
}

/**
 * Enter the state dirs `job.names[start, end)` in the index (the part of a
 * rebuild each thread does; doing a dir twice is harmless: a marker made
 * again exists already). `keepRead`: remember what was read for this
 * command's next reads (justRead), on the thread that will do them.
 */
export function enterStateDirs(
  job: RebuildJob,
  start: number,
  end: number,
  found: EnteredDirs,
  keepRead: boolean,
): void {
  const {home, names, legacy} = job
  const base = runsDir(home)
  for (let i = start; i < end; i++) {
    const id = names[i]
    const dir = base + sep + id
    let meta: RunMeta | undefined
    try {
      meta = readRunMetaRaw(dir)
    } catch {
      continue
    }
    if (!meta) continue
    found.launches.push({at: typeof meta.created_at === 'string' ? meta.created_at : '', id})
    // Earlier generations still owed keep their own markers.
    for (const owed of owedGenerations(meta)) {
      const owing = readOwedInstance(dir, meta, owed.run_instance_id)
      if (owing.kind === 'owed') enterFinished(home, id, owed.run_instance_id, owing.state.meta, found.queues)
    }
    if (!isTerminal(meta.status)) {
      addIndexMarker(home, id, meta.run_instance_id)
      continue
    }
    if (!needsReport(dir, meta)) continue
    const was = legacy.get(`${meta.owner}\u0000${id}`)
    if (was === meta.run_instance_id) {
      recordReported(dir, {
        run_instance_id: was,
        owner: meta.owner,
        batch_id: 'legacy',
        reported_at: new Date().toISOString(),
      })
      continue
    }
    if (keepRead && !meta.generation_move && justRead.size < JUST_READ_MAX) justRead.set(dir, meta)
    enterFinished(home, id, meta.run_instance_id, meta, found.queues)
  }
}

/** Enter a finished, unreported instance: queued when its fields allow (its queue's tag added to `queues`, whose flags the caller raises), else live (a reader sorts it out). */
function enterFinished(home: string, id: string, instance: string, meta: RunMeta, queues: Set<string>): void {
  const queued = queuedMarkerName(id, instance, meta)
  if (queued) {
    const tag = ownerTag(meta.owner)
    enqueueMarker(home, tag, queued, undefined, false)
    queues.add(tag)
  } else if (isPlainName(instance)) addIndexMarker(home, id, instance)
}

/** `owner\0run` -> reported instance, from delivery journals that still carry a `reported` map (the earlier format). */
function legacyReported(home: string): Map<string, string> {
  const found = new Map<string, string>()
  let files: string[]
  try {
    files = readdirSync(join(home, 'delivery')).filter((f) => f.endsWith('.json'))
  } catch {
    return found
  }
  for (const file of files) {
    try {
      const journal = readJsonFile<{owner?: unknown; reported?: unknown}>(join(home, 'delivery', file), {
        maxBytes: 64 * 1024 * 1024,
      })
      if (typeof journal?.owner !== 'string' || !journal.reported || typeof journal.reported !== 'object') continue
      for (const [run, instance] of Object.entries(journal.reported as Record<string, unknown>)) {
        if (typeof instance === 'string') found.set(`${journal.owner}\u0000${run}`, instance)
      }
    } catch {}
  }
  return found
}
