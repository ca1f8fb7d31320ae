/**
 * The run index (`$ACTORS_HOME/index/`): which Runs the live commands must
 * look at, so `wait`, `inspect --status running`, singleton checks and the
 * live views cost what is live or unreported, not what is history.
 *
 * One empty marker file `<run>@<run_instance_id>` per Run instance that is
 * live, or finished and not yet reported to its owner. A launch creates its
 * marker (under the Run's lock, before run.json exists, so before the Run can
 * end); a marker is removed only once its instance is proven to need nothing
 * (terminal and reported, or silent; or its state dir is gone). Because each
 * entry is its own file named by a unique instance, concurrent writers never
 * rewrite a shared document and a relaunch can never have its marker removed
 * on behalf of an earlier instance: no entry is lost.
 *
 * The state dirs stay the truth; the index is a cache of them. Every entry is
 * re-read from its state dir on use (a hand-edited run.json is seen), and the
 * stamp (`.stamp.json`: runs/'s mtime, link count and number of entries, kept
 * current by every launch and prune under the index lock) tells when runs/
 * changed behind the kernel's back: a state dir copied in or restored, or the
 * index missing, damaged or foreign. Then the index is rebuilt from every
 * state dir, once.
 */
import {closeSync, existsSync, mkdirSync, openSync, readdirSync, statSync, unlinkSync} from 'node:fs'
import {join, sep} from 'node:path'
import {indexDir, isPlainName, runsDir} from './home.js'
import {appendLaunch, rewriteLaunchLog} from './launch-log.js'
import {withLockSync} from './lock.js'
import {recordReported, reportedInstance} from './reported.js'
import {owedGenerations, readOwedArchive} from './generations/owed.js'
import {RunJsonCache} from './listing-cache.js'
import {listRunIds, readRunMetaRaw, readRunState, RUN_FILES, type RunState} from './run-store.js'
import {readJsonFile, writeFileAtomic} from './state-files.js'
import {isTerminal, type RunMeta} from './run-types.js'

const INDEX_SCHEMA = 'actors-index-v1'
const STAMP_FILE = '.stamp.json'
const LOCK_FILE = '.lock'

interface Stamp {
  schema: typeof INDEX_SCHEMA
  runs_mtime_ns: string
  runs_nlink: number
  /** Entries of runs/ (dot-names excepted) when the stamp was written. */
  runs_count: number
}

type RunsDirStat = {mtime: string; nlink: number}

function statRuns(home: string): RunsDirStat | undefined {
  try {
    const stat = statSync(runsDir(home), {bigint: true})
    return {mtime: String(stat.mtimeNs), nlink: Number(stat.nlink)}
  } catch {
    return undefined
  }
}

function readStamp(home: string): Stamp | undefined {
  try {
    const stamp = readJsonFile<Stamp>(join(indexDir(home), STAMP_FILE), {schema: INDEX_SCHEMA, maxBytes: 4096})
    if (stamp && typeof stamp.runs_mtime_ns === 'string' && Number.isInteger(stamp.runs_nlink) && Number.isInteger(stamp.runs_count)) return stamp
  } catch {}
  // Missing, damaged or foreign: never trusted, the index is rebuilt.
  return undefined
}

function writeStamp(home: string, runs: RunsDirStat, count: number): void {
  const stamp: Stamp = {schema: INDEX_SCHEMA, runs_mtime_ns: runs.mtime, runs_nlink: runs.nlink, runs_count: count}
  writeFileAtomic(join(indexDir(home), STAMP_FILE), JSON.stringify(stamp) + '\n', {durable: false})
}

const unchanged = (stamp: Stamp, runs: RunsDirStat | undefined) => runs !== undefined && stamp.runs_mtime_ns === runs.mtime && stamp.runs_nlink === runs.nlink

function withIndexLock<T>(home: string, fn: () => T): T {
  mkdirSync(indexDir(home), {recursive: true})
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
      writeStamp(home, after ?? {mtime: stamp.runs_mtime_ns, nlink: stamp.runs_nlink}, stamp.runs_count + added)
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
      mkdirSync(dir)
      fresh = true
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
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

function markerFile(home: string, id: string, instance: string): string {
  return indexDir(home) + sep + id + '@' + instance
}

/** Enter a Run instance in the index (idempotent). Launch calls it before writing run.json. */
export function addIndexMarker(home: string, id: string, instance: string): void {
  const file = markerFile(home, id, instance)
  try {
    closeSync(openSync(file, 'a'))
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
    mkdirSync(indexDir(home), {recursive: true})
    closeSync(openSync(file, 'a'))
  }
}

/** Remove a Run instance from the index: only once it needs nothing (terminal and reported, silent, or gone). */
export function dropIndexMarker(home: string, id: string, instance: string): void {
  try {
    unlinkSync(markerFile(home, id, instance))
  } catch {}
}

/** What an index marker stands for. */
export type IndexedInstance =
  | {kind: 'live' | 'unreported'; state: RunState}
  /** An earlier generation of the Run, finished and not yet reported: its dir is generations/<n>/. */
  | {kind: 'owed'; state: RunState}
  /** Terminal and reported (or silent): the marker can go. */
  | {kind: 'settled'}
  /** No such instance any more (pruned, or its id relaunched): the marker can go. */
  | {kind: 'gone'}
  /** The state dir exists without run.json yet (a launch in progress). */
  | {kind: 'creating'}
  | {kind: 'damaged'; dir: string; error: string}

/**
 * The one place that maps an index entry to the Run instance it stands for,
 * read (and reconciled) from its state dir. An instance is unreported while
 * it is terminal, not silent, and its state dir holds no reported.json for it.
 */
export function readIndexedInstance(home: string, id: string, instance: string, cache?: TerminalCache): IndexedInstance {
  const dir = runsDir(home) + sep + id
  const name = id + '@' + instance
  const cached = cache?.lookup(name, dir + sep + RUN_FILES.meta)
  if (cached) return needsReport(dir, cached) ? {kind: 'unreported', state: {dir, meta: cached}} : {kind: 'settled'}
  let state: RunState | undefined
  try {
    state = readRunState(dir, {withResult: false})
  } catch (error) {
    return {kind: 'damaged', dir, error: (error as Error).message}
  }
  if (!state) return existsSync(dir) ? {kind: 'creating'} : {kind: 'gone'}
  if (state.meta.run_instance_id !== instance) return readOwedInstance(dir, state.meta, instance)
  if (!isTerminal(state.meta.status)) return {kind: 'live', state}
  if (!needsReport(dir, state.meta)) return {kind: 'settled'}
  cache?.remember(name, indexedFields(state.meta))
  return {kind: 'unreported', state}
}

/**
 * An instance that is not the Run's current one: an earlier generation
 * run.json lists as owed keeps its marker until its archive holds its
 * reported.json (generations/delivery.ts); any other is gone.
 */
function readOwedInstance(dir: string, current: RunMeta, instance: string): IndexedInstance {
  const archive = readOwedArchive(dir, current, instance)
  if (!archive || !isTerminal(archive.meta.status) || !needsReport(archive.dir, archive.meta)) return {kind: 'gone'}
  return {kind: 'owed', state: archive}
}

/**
 * What live commands read of a finished, unreported Run (selection, batch rows,
 * listings): cached by run.json's stat in index/.terminal.json, so repeated
 * waits over thousands of unreported Runs (draining a backlog) stat each
 * run.json instead of parsing it. Finished Runs read through the index carry
 * only these fields.
 */
const INDEXED_FIELDS = ['schema', 'run', 'run_instance_id', 'recipe', 'status', 'owner', 'parent', 'root', 'depth', 'created_at', 'started_at', 'ended_at', 'duration_ms', 'exit_code', 'pid', 'notification', 'generation'] as const

type TerminalCache = RunJsonCache<RunMeta>

function indexedFields(meta: RunMeta): RunMeta {
  const picked: Record<string, unknown> = {}
  for (const field of INDEXED_FIELDS) if (meta[field] !== undefined) picked[field] = meta[field]
  return picked as RunMeta
}

function terminalCache(home: string): TerminalCache {
  return new RunJsonCache<RunMeta>(join(indexDir(home), '.terminal.json'), 'actors-index-terminal-v1', (name, meta) => {
    return typeof meta.status === 'string' && isTerminal(meta.status) && `${meta.run}@${meta.run_instance_id}` === name && typeof meta.owner === 'string'
  })
}

/** Whether a terminal Run still has to be reported to its owner. */
function needsReport(dir: string, meta: RunMeta): boolean {
  return meta.notification !== 'silent' && reportedInstance(dir) !== meta.run_instance_id
}

export interface IndexedRuns {
  /** Live Runs and finished, unreported ones (every owner), in no particular order. */
  runs: RunState[]
  /** Earlier generations not yet reported (every owner): dirs are generations/<n>/. Only `wait` delivers them. */
  archived: RunState[]
  damaged: Array<{state_dir: string; error: string}>
}

/**
 * Every live or unreported Run, read from its state dir. Cost: one stat of
 * runs/ plus one read per entry; the index is rebuilt first when runs/
 * changed behind the kernel's back. Entries that need nothing any more are
 * dropped on the way (a cache's upkeep, safe under concurrency: see above).
 */
export function readIndexedRuns(home: string): IndexedRuns {
  refreshIndex(home)
  const runs: RunState[] = []
  const archived: RunState[] = []
  const damaged: IndexedRuns['damaged'] = []
  let names: string[]
  try {
    names = readdirSync(indexDir(home))
  } catch {
    names = []
  }
  const cache = terminalCache(home)
  for (const name of names) {
    const at = name.lastIndexOf('@')
    if (name.startsWith('.') || at <= 0) continue
    const id = name.slice(0, at)
    const instance = name.slice(at + 1)
    if (!isPlainName(id)) continue
    const found = readIndexedInstance(home, id, instance, cache)
    if (found.kind === 'live' || found.kind === 'unreported') runs.push(found.state)
    else if (found.kind === 'owed') archived.push(found.state)
    else if (found.kind === 'damaged') damaged.push({state_dir: found.dir, error: found.error})
    else if (found.kind === 'settled' || found.kind === 'gone') dropIndexMarker(home, id, instance)
  }
  cache.save()
  return {runs, archived, damaged}
}

/**
 * Make sure the index covers runs/: nothing to do while the stamp matches
 * runs/ (one stat); after a change made outside the kernel, count the
 * entries, and rebuild when the count says a state dir appeared or vanished
 * (or the stamp is missing, damaged or foreign).
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

/**
 * Rebuild from every state dir: a marker for each live or unreported Run
 * (existing markers stay: they are re-checked on use), and the launch log.
 * Runs a delivery journal of the earlier format lists as reported get their
 * reported.json, so an upgraded state root does not report its history again.
 */
function rebuildIndex(home: string, names: string[]): void {
  const legacy = legacyReported(home)
  const launches: Array<{at: string; id: string}> = []
  const base = runsDir(home)
  for (const id of names) {
    const dir = base + sep + id
    let meta: RunMeta | undefined
    try {
      meta = readRunMetaRaw(dir)
    } catch {
      continue
    }
    if (!meta) continue
    launches.push({at: typeof meta.created_at === 'string' ? meta.created_at : '', id})
    // Earlier generations still owed keep their own markers.
    for (const owed of owedGenerations(meta)) {
      if (readOwedInstance(dir, meta, owed.run_instance_id).kind === 'owed') addIndexMarker(home, id, owed.run_instance_id)
    }
    if (!isTerminal(meta.status)) {
      addIndexMarker(home, id, meta.run_instance_id)
      continue
    }
    if (!needsReport(dir, meta)) continue
    const was = legacy.get(`${meta.owner}\u0000${id}`)
    if (was === meta.run_instance_id) {
      recordReported(dir, {run_instance_id: was, owner: meta.owner, batch_id: 'legacy', reported_at: new Date().toISOString()})
      continue
    }
    addIndexMarker(home, id, meta.run_instance_id)
  }
  launches.sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0))
  rewriteLaunchLog(home, launches)
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
      const journal = readJsonFile<{owner?: unknown; reported?: unknown}>(join(home, 'delivery', file), {maxBytes: 64 * 1024 * 1024})
      if (typeof journal?.owner !== 'string' || !journal.reported || typeof journal.reported !== 'object') continue
      for (const [run, instance] of Object.entries(journal.reported as Record<string, unknown>)) {
        if (typeof instance === 'string') found.set(`${journal.owner}\u0000${run}`, instance)
      }
    } catch {}
  }
  return found
}
