/**
 * The run index (`$ACTORS_HOME/index/`): which Runs the live commands must
 * look at, so `wait`, `inspect --status running`, singleton checks and the
 * live views cost what is live or unreported, not what is history.
 *
 * One empty marker file per Run instance that is live, or finished and not
 * yet reported to its owner, in one of two forms:
 *
 * - `<run>@<instance>` (a "live" marker): made by the launch (under the Run's
 *   lock, before run.json exists, so before the Run can end). Live commands
 *   read every one of these.
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
 */
import {existsSync, readdirSync, renameSync, statSync} from 'node:fs'
import {claimPrivateDir, makePrivateDir, refuseLinkedDir} from '../platform/private-files.js'
import {join, sep} from 'node:path'
import {indexDir, isPlainName, runsDir} from '../platform/home.js'
import {appendLaunch, compactLaunchLog, rewriteLaunchLog} from './launch-log.js'
import {withLockSync} from '../platform/file-lock.js'
import {isReported, recordReported} from '../runs/reported.js'
import {owedGenerations, readOwedArchive} from '../runs/generation-owed.js'
import {compareText} from '../platform/compare.js'
import {listRunIds, readRunMetaRaw, readRunState, type RunState} from '../runs/store.js'
import {enqueueMarker, listOwnerQueue, makeMarkerFile, markQueueChanged, ownerQueueDir, QueueCursor, queueOwnerTags, tagValue, writeQueueCursor, type CursorLine} from './index-queue.js'
import {readJsonFile, unlinkQuietly, writeFileAtomic} from '../platform/state-files.js'
import {isTerminal, type RunMeta} from '../records/run.js'
import {indexWorkerScript} from '../platform/package-root.js'
import {secondCoreAvailable, shareWork} from '../platform/two-threads.js'
import {testHookNumber} from '../platform/test-hooks.js'

// v3: queued markers moved from index/ into index/queue/<owner tag>/ (a v2 index is rebuilt, its queued markers moved).
const INDEX_SCHEMA = 'actors-index-v3'
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

function markerFile(home: string, id: string, instance: string): string {
  return indexDir(home) + sep + id + '@' + instance
}

/** Enter a Run instance in the index as live (idempotent). Launch calls it before writing run.json. */
export function addIndexMarker(home: string, id: string, instance: string): void {
  touch(markerFile(home, id, instance), home)
}

function touch(file: string, home: string): void {
  try {
    makeMarkerFile(home, file)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
    makePrivateDir(indexDir(home))
    makeMarkerFile(home, file)
  }
}

/**
 * Remove a Run instance from the index: only once it needs nothing (terminal
 * and reported, silent, or gone). `meta`, when known, names its queued
 * marker. Returns whether a marker was removed (none: it is under a name
 * `meta` does not give, or gone already).
 */
export function dropIndexMarker(home: string, id: string, instance: string, meta?: MarkerFields): boolean {
  // A delivered instance's marker is queued by then, nearly always: try that name first (a failed unlink costs an exception).
  const queued = meta && queuedMarkerName(id, instance, meta)
  if (queued && unlinkQuietly(ownerQueueDir(home, ownerTag(meta.owner)) + sep + queued)) return true
  return unlinkQuietly(markerFile(home, id, instance))
}

/**
 * Remove the markers of delivered instances, in both forms. Members whose
 * run.json fields are in `metas` (by `run@instance`) are removed by name;
 * the others (a batch redelivered after its wait died, or a Run whose
 * run.json changed after its marker was named) cost one listing of the index.
 */
export function dropIndexMarkers(home: string, members: Array<{run: string; run_instance_id: string}>, metas: Map<string, MarkerFields> = new Map()): void {
  const unknown = new Set<string>()
  for (const m of members) {
    const key = m.run + '@' + m.run_instance_id
    if (!dropIndexMarker(home, m.run, m.run_instance_id, metas.get(key))) unknown.add(key)
  }
  if (unknown.size === 0) return
  for (const tag of queueOwnerTags(home)) {
    for (const name of listOwnerQueue(home, tag)) {
      const parsed = parseMarker(name)
      if (parsed?.queued && unknown.has(parsed.id + '@' + parsed.instance) && validMarker(parsed)) unlinkQuietly(ownerQueueDir(home, tag) + sep + name)
    }
  }
}


function listIndex(home: string): string[] {
  try {
    return readdirSync(indexDir(home))
  } catch {
    return []
  }
}

/** Where a queued entry sorts: the order of completion batches (select.ts), known from the marker's name. */
export interface QueueKey {
  ended: string
  run: string
  instance: string
}

interface Marker {
  name: string
  id: string
  instance: string
  /** Set for a queued marker. */
  queued?: QueueKey & {owner: string; root: string}
}

const QUEUED_PREFIX = '~'
const QUEUED_CODE = QUEUED_PREFIX.charCodeAt(0)
/** What an end time may look like in a marker name (run.json's ISO time); anything else sorts last, as select.ts does. */
const ENDED_PATTERN = /^[0-9A-Za-z:.+-]{1,40}$/
const TAG_PATTERN = /^[0-9a-f]{8}$/

/** A short, stable hash (32-bit FNV-1a) naming an owner or a root in a marker: a collision only costs a read. */
export function markerTag(text: string): string {
  let hash = 0x811c9dc5
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i)
    hash = Math.imul(hash, 0x01000193)
  }
  return (hash >>> 0).toString(16).padStart(8, '0')
}

/** The run.json fields a queued marker's name is made of. */
export type MarkerFields = Pick<RunMeta, 'owner' | 'root' | 'run'> & {ended_at?: unknown}

/** The tree a Run belongs to (its root Run's id), as tagged in queued markers. */
export function treeTag(meta: Pick<RunMeta, 'root' | 'run'>): string {
  return markerTag(typeof meta.root === 'string' ? meta.root : meta.run)
}

function endedKey(meta: {ended_at?: unknown}): string {
  return typeof meta.ended_at === 'string' && ENDED_PATTERN.test(meta.ended_at) ? meta.ended_at : '9999'
}

/** The queued marker of a finished instance (undefined when its fields cannot make a safe file name). */
function queuedMarkerName(id: string, instance: string, meta: MarkerFields): string | undefined {
  if (!isPlainName(id) || !isPlainName(instance) || typeof meta.owner !== 'string') return undefined
  return `${QUEUED_PREFIX}${endedKey(meta)}${QUEUED_PREFIX}${ownerTag(meta.owner)}${QUEUED_PREFIX}${treeTag(meta)}${QUEUED_PREFIX}${id}@${instance}`
}

let lastOwner: {owner: string; tag: string} | undefined
/** markerTag of an owner: a command's Runs mostly share one, so the last is kept. */
function ownerTag(owner: string): string {
  if (lastOwner?.owner !== owner) lastOwner = {owner, tag: markerTag(owner)}
  return lastOwner.tag
}

/**
 * Split a marker name into its parts, cheaply: a plain wait lists every
 * queued marker of the index to pick the oldest. The parts are checked
 * (validMarker) only for the markers actually read.
 */
function parseMarker(name: string): Marker | undefined {
  const at = name.lastIndexOf('@')
  if (at <= 0) return undefined
  const instance = name.slice(at + 1)
  if (name.charCodeAt(0) !== QUEUED_CODE) return {name, id: name.slice(0, at), instance}
  const end = queuedEnd(name)
  if (end === -1) return undefined
  const id = name.slice(end + 19, at)
  const ended = name.slice(1, end)
  return {name, id, instance, queued: {ended, run: id, instance, owner: name.slice(end + 1, end + 9), root: name.slice(end + 10, end + 18)}}
}

/** Whether a parsed marker is one the kernel could have written (anything else is not the index's: left alone). */
function validMarker(marker: Marker): boolean {
  if (!isPlainName(marker.id) || !isPlainName(marker.instance)) return false
  const queued = marker.queued
  return !queued || (ENDED_PATTERN.test(queued.ended) && TAG_PATTERN.test(queued.owner) && TAG_PATTERN.test(queued.root))
}

/** Batch order of two queue keys (end time, run id, instance), as select.ts orders trees. */
export function compareQueueKeys(a: QueueKey, b: QueueKey): number {
  return compareText(a.ended, b.ended) || compareText(a.run, b.run) || compareText(a.instance, b.instance)
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
 * run.json of finished, unreported Runs an index rebuild just read, so the
 * readers in the same command do not read them again (a finished Run changes
 * only by hand or by being reported, and reporting happens after the read
 * anyway: a cache for one command, never across commands). Taken on first use.
 * Bounded: a command reads a batch or a table of them, and keeping every Run of
 * a large rebuild alive would cost more in memory than the reads it saves.
 */
const justRead = new Map<string, RunMeta>()
const JUST_READ_MAX = 1024

/**
 * The one place that maps an index entry to the Run instance it stands for,
 * read (and reconciled) from its state dir. An instance is unreported while
 * it is terminal, not silent, and its state dir holds no reported.json for it.
 */
export function readIndexedInstance(home: string, id: string, instance: string): IndexedInstance {
  const dir = runsDir(home) + sep + id
  let state: RunState | undefined
  const rebuilt = justRead.get(dir)
  if (rebuilt) {
    justRead.delete(dir)
    // Found finished and unreported a moment ago, by the rebuild this command ran.
    if (rebuilt.run_instance_id === instance) return {kind: 'unreported', state: {dir, meta: rebuilt}}
    state = {dir, meta: rebuilt}
  } else {
    try {
      state = readRunState(dir, {withResult: false})
    } catch (error) {
      return {kind: 'damaged', dir, error: (error as Error).message}
    }
  }
  if (!state) return existsSync(dir) ? {kind: 'creating'} : {kind: 'gone'}
  if (state.meta.run_instance_id !== instance) return readOwedInstance(dir, state.meta, instance)
  if (!isTerminal(state.meta.status)) return {kind: 'live', state}
  if (!needsReport(dir, state.meta)) return {kind: 'settled'}
  return {kind: 'unreported', state}
}

/**
 * An instance that is not the Run's current one: an earlier generation
 * run.json lists as owed keeps its marker until its archive holds its
 * reported.json (runs/generation-delivery.ts); any other is gone.
 */
function readOwedInstance(dir: string, current: RunMeta, instance: string): IndexedInstance {
  const archive = readOwedArchive(dir, current, instance)
  if (!archive || !isTerminal(archive.meta.status) || !needsReport(archive.dir, archive.meta)) return {kind: 'gone'}
  return {kind: 'owed', state: archive}
}

/** Whether a terminal Run still has to be reported to its owner. */
function needsReport(dir: string, meta: RunMeta): boolean {
  return meta.notification !== 'silent' && !isReported(dir, meta.run_instance_id)
}

export interface IndexedRuns {
  /** Live Runs and finished, unreported ones (every owner), in no particular order. */
  runs: RunState[]
  /** Earlier generations not yet reported (every owner): dirs are generations/<n>/. Only `wait` delivers them. */
  archived: RunState[]
  damaged: Array<{state_dir: string; error: string}>
}

const noRuns = (): IndexedRuns => ({runs: [], archived: [], damaged: []})

/**
 * Where the end time of a queued marker name (`~<ended>~<owner: 8>~<root: 8>~<run>@<instance>`) ends: the
 * index of the `~` after it; -1 when the name does not have that shape. Found without allocating: a plain wait
 * looks at every queued name of its queue. The name is `text[start, stop)` (a line of a cursor) or all of it.
 */
function queuedEnd(text: string, start = 0, stop = text.length): number {
  const end = text.indexOf(QUEUED_PREFIX, start + 1)
  const at = text.lastIndexOf('@', stop - 1)
  if (end < start + 2 || at < start || at <= end + 19 || text.charCodeAt(end + 9) !== QUEUED_CODE || text.charCodeAt(end + 18) !== QUEUED_CODE) return -1
  return end
}

/** Code-unit order of `a[as, ae)` and `b[bs, be)`, as compareText orders the two substrings (without making them). */
function compareRanges(a: string, as: number, ae: number, b: string, bs: number, be: number): number {
  const n = Math.min(ae - as, be - bs)
  for (let i = 0; i < n; i++) {
    const d = a.charCodeAt(as + i) - b.charCodeAt(bs + i)
    if (d !== 0) return d
  }
  return ae - as - (be - bs)
}

/** Batch order (compareQueueKeys) of two queued marker names, from the names (no parts are made). */
function compareQueuedNames(a: string, b: string): number {
  const aEnd = queuedEnd(a)
  const bEnd = queuedEnd(b)
  const aAt = a.lastIndexOf('@')
  const bAt = b.lastIndexOf('@')
  return (
    compareRanges(a, 1, aEnd, b, 1, bEnd) ||
    compareRanges(a, aEnd + 19, aAt, b, bEnd + 19, bAt) ||
    compareRanges(a, aAt + 1, a.length, b, bAt + 1, b.length)
  )
}

/**
 * Whether queued name `b` comes after `a` in batch order. The usual case is
 * decided by a native comparison of the whole names: end times of one length
 * that differ (checked from their last characters, where adjacent ones
 * differ) order the names as the end times do.
 */
function followsInOrder(a: string, aEnd: number, b: string, bEnd: number): boolean {
  if (aEnd === bEnd && a < b) {
    for (let i = aEnd - 1; i > 0; i--) if (a.charCodeAt(i) !== b.charCodeAt(i)) return true
  }
  return compareQueuedNames(a, b) <= 0
}

/**
 * The queued markers a reader works through, in batch order: as listed
 * (names, and their order), or as the owner's cursor holds them, read a
 * chunk at a time as the reader goes (`grow()`).
 */
interface QueueNames {
  /** Entries known so far. */
  readonly size: number
  /** Whether this came from the cursor (else from listing the queue). */
  readonly cached: boolean
  name(i: number): string
  /** The root tag of entry `i` as a number (tagValue); -1 when its name is not a queued marker's. */
  rootTag(i: number): number
  /** Read more entries (a cursor's next chunk); false when there are no more. */
  grow(): boolean
}

function listedQueue(names: string[], order: Int32Array): QueueNames {
  return {
    size: order.length,
    cached: false,
    name: (i) => names[order[i]],
    rootTag(i) {
      const name = names[order[i]]
      return tagValue(name, queuedEnd(name) + 10)
    },
    grow: () => false,
  }
}

class CursorQueue implements QueueNames {
  readonly cached = true
  readonly lines: CursorLine[] = []
  constructor(readonly cursor: QueueCursor) {}
  get size(): number {
    return this.lines.length
  }
  name(i: number): string {
    return this.lines[i].name
  }
  rootTag(i: number): number {
    return this.lines[i].root
  }
  grow(): boolean {
    for (;;) {
      const more = this.cursor.read()
      if (more.length > 0) {
        for (const line of more) this.lines.push(line)
        return true
      }
      if (this.cursor.ended) return false
    }
  }
}

/**
 * Reads the run index in the pieces a command needs: every live marker
 * (`live()`), then queued entries oldest first (`more(n)`), the rest of some
 * trees (`trees(tags)`), or all of them (`rest()`). Each entry is read from
 * its state dir once; entries that need nothing any more are dropped, and
 * markers whose form or name no longer matches their state dir are renamed
 * (a cache's upkeep, safe under concurrency: see the module comment).
 *
 * A plain wait over a large backlog reads only a window of its owner's
 * queue, so the queue is kept as names: a name is taken apart only when its
 * entry is read. It comes from the owner's cursor (index-queue.ts; `cursor:
 * true`, for a wait holding the owner's journal lock), or from a listing,
 * which comes sorted by name (libuv sorts it): for names of distinct end
 * times that is batch order already, so the order is checked in one pass and
 * the names sorted only when it does not hold.
 */
export class RunIndexReader {
  private loaded: QueueNames | undefined
  /** Per queue entry: its root tag as a number (tagValue), made on the first trees() call. */
  private roots: Float64Array | undefined
  /** Per queue entry: 1 once read (or skipped as read already), 2 once read and found to need nothing (dropped). */
  private taken = new Uint8Array(0)
  /** Where more() goes on in the queue. */
  private next = 0
  private readonly liveNames: string[] = []
  private readonly ownerTag: string | undefined
  /** Made with `cursor: true`: reads and keeps the owner's queue cursor. */
  private readonly keepsCursor: boolean
  /** Root tags of cursor entries read that no other cursor entry shares: trees() need not look for the rest of those. */
  private readonly loneRoots = new Set<number>()
  private readonly seen = new Set<string>()
  private ids: Set<string> | undefined
  private last: QueueKey | undefined
  /** more() found the end of the queue: every queued entry was read or passed over. */
  private atEnd = false

  constructor(private readonly home: string, options: {owner?: string; cursor?: boolean} = {}) {
    refreshIndex(home)
    this.ownerTag = options.owner === undefined ? undefined : markerTag(options.owner)
    for (const name of listIndex(home)) {
      // Queued names here are an earlier index format's (a rebuild moves them): not live.
      if (name.charCodeAt(0) !== QUEUED_CODE && name.charCodeAt(0) !== 46) this.liveNames.push(name)
    }
    this.keepsCursor = options.cursor === true && this.ownerTag !== undefined
  }

  /** The queue, opened on first use: a command about live Runs never lists it. */
  private get queue(): QueueNames {
    if (!this.loaded) {
      const cursor = this.keepsCursor ? QueueCursor.open(this.home, this.ownerTag!) : undefined
      this.useQueue(cursor ? new CursorQueue(cursor) : this.listQueue())
    }
    return this.loaded!
  }

  private useQueue(queue: QueueNames): void {
    this.loaded = queue
    this.taken = new Uint8Array(queue.size)
    this.roots = undefined
    this.next = 0
  }

  /** Read the cursor's next chunk into the queue; false at its end. */
  private grow(): boolean {
    if (!this.queue.grow()) return false
    const taken = new Uint8Array(this.queue.size)
    taken.set(this.taken)
    this.taken = taken
    this.roots = undefined
    return true
  }

  /** List the queue (the owner's, or every owner's) in batch order. */
  private listQueue(): QueueNames {
    const tags = this.ownerTag === undefined ? queueOwnerTags(this.home) : [this.ownerTag]
    const names = tags.length === 1 ? listOwnerQueue(this.home, tags[0]) : tags.flatMap((tag) => listOwnerQueue(this.home, tag))
    const picked = new Int32Array(names.length)
    let count = 0
    let ordered = true
    let previous = ''
    let previousEnd = -1
    for (let i = 0; i < names.length; i++) {
      const name = names[i]
      if (name.charCodeAt(0) !== QUEUED_CODE) continue
      const end = queuedEnd(name)
      if (end === -1 || (this.ownerTag !== undefined && !name.startsWith(this.ownerTag, end + 1))) continue
      if (ordered && previousEnd !== -1 && !followsInOrder(previous, previousEnd, name, end)) ordered = false
      picked[count++] = i
      previous = name
      previousEnd = end
    }
    const order = picked.subarray(0, count)
    if (!ordered) order.sort((i, j) => compareQueuedNames(names[i], names[j]))
    return listedQueue(names, order)
  }

  /**
   * The cursor ran out: list the queue (markers added without their flag, or
   * nothing), skipping what was read. Never "nothing queued" from a cursor alone.
   */
  private relist(): void {
    const found = this.listQueue()
    this.useQueue(found)
    for (let i = 0; i < found.size; i++) {
      const marker = parseMarker(found.name(i))
      if (marker && this.seen.has(marker.id + '@' + marker.instance)) this.taken[i] = 1
    }
  }

  /** Whether the index holds a marker of Run `id` (any form, any owner; read or not: each is live or unreported). */
  hasMarker(id: string): boolean {
    if (!this.ids) {
      this.ids = new Set()
      const names = [...this.liveNames, ...queueOwnerTags(this.home).flatMap((tag) => listOwnerQueue(this.home, tag))]
      for (const name of names) {
        const marker = parseMarker(name)
        if (marker) this.ids.add(marker.id)
      }
    }
    return this.ids.has(id)
  }

  /** Every live marker (live Runs, and finished ones no reader has queued yet: they are queued now). */
  live(): IndexedRuns {
    const found = noRuns()
    for (const name of this.liveNames) {
      const marker = parseMarker(name)
      if (marker) this.read(marker, found)
    }
    return found
  }

  /** The next `count` queued entries in batch order. */
  more(count: number): IndexedRuns {
    const found = noRuns()
    for (let n = 0; n < count; this.next++) {
      if (this.next >= this.queue.size && !this.grow()) {
        this.atEnd = !this.queue.cached
        if (this.atEnd) break
        this.relist()
        this.atEnd = this.queue.size === 0
        if (this.atEnd) break
      }
      const marker = parseMarker(this.queue.name(this.next))
      if (!marker?.queued) {
        // Not a queued marker's name (a damaged cursor line): passed over for good, so a cursor's position can pass it.
        this.taken[this.next] = 2
        continue
      }
      this.last = marker.queued
      if (this.taken[this.next]) continue
      const kept = this.read(marker, found)
      this.taken[this.next] = kept ? 1 : 2
      if (kept && this.queue instanceof CursorQueue && !this.queue.lines[this.next].shared) this.loneRoots.add(this.queue.lines[this.next].root)
      n++
    }
    return found
  }

  /** Every queued entry not read yet whose tree tag (treeTag) is in `tags`. */
  trees(tags: Set<string>): IndexedRuns {
    const found = noRuns()
    const wanted = new Set<number>()
    for (const tag of tags) {
      const value = tagValue(tag, 0)
      // A tree whose only queued entry was read from the cursor: nothing more to find.
      if (value !== -1 && !this.loneRoots.has(value)) wanted.add(value)
    }
    if (wanted.size === 0) return found
    // The rest of a tree may be anywhere after the window: the whole cursor is read.
    while (this.grow());
    if (!this.roots) {
      this.roots = new Float64Array(this.queue.size)
      for (let i = 0; i < this.queue.size; i++) this.roots[i] = this.queue.rootTag(i)
    }
    for (let i = this.next; i < this.queue.size; i++) {
      if (this.taken[i] || !wanted.has(this.roots[i])) continue
      const marker = parseMarker(this.queue.name(i))
      this.taken[i] = marker && this.read(marker, found) ? 1 : 2
    }
    return found
  }

  /** Every queued entry not read yet. */
  rest(): IndexedRuns {
    return this.more(Infinity)
  }

  /**
   * Queued entries not read yet: an estimate of what is left (some may turn
   * out settled). From a cursor, never 0: only a listing says nothing is left.
   */
  get unread(): number {
    let n = 0
    for (let i = this.next; i < this.queue.size; i++) if (!this.taken[i]) n++
    if (!(this.queue instanceof CursorQueue)) return n
    let read = 0
    for (let i = 0; i < this.queue.size; i++) if (this.taken[i]) read++
    return Math.max(1, n, this.queue.cursor.left - read)
  }

  /** Whether more() reached the end of the queue (a later more() finds nothing). */
  get exhausted(): boolean {
    return this.atEnd
  }

  /** The key of the last entry `more()` read: every queued entry not read yet sorts after it. */
  get frontier(): QueueKey | undefined {
    return this.last
  }

  /**
   * Keep the owner's queue, as this reader knows it, for the owner's next
   * wait (index-queue.ts): every entry except those read and found to need
   * nothing, and except `claimed` (`run@instance` of a batch just claimed).
   * Only for a reader made with `cursor: true`, under the owner's journal lock.
   */
  saveCursor(claimed: Set<string>): void {
    if (!this.keepsCursor || !this.loaded) return
    const queue = this.queue
    const consumed = (i: number): boolean => {
      if (this.taken[i] === 2) return true
      if (this.taken[i] !== 1 || claimed.size === 0) return false
      const name = queue.name(i)
      return claimed.has(name.slice(name.lastIndexOf(QUEUED_PREFIX) + 1))
    }
    if (queue instanceof CursorQueue) {
      const index = new Map(queue.lines.map((line, i) => [line, i]))
      queue.cursor.keep(queue.lines, (line) => consumed(index.get(line)!))
      return
    }
    const names: string[] = []
    for (let i = 0; i < queue.size; i++) if (!consumed(i)) names.push(queue.name(i))
    writeQueueCursor(this.home, this.ownerTag!, names, (name) => tagValue(name, queuedEnd(name) + 10))
  }

  /** Read the entry of `marker`; false when it needs nothing any more (its marker was dropped) or cannot be used. */
  private read(marker: Marker, found: IndexedRuns): boolean {
    const key = marker.id + '@' + marker.instance
    if (this.seen.has(key) || !validMarker(marker)) return false
    this.seen.add(key)
    const entry = readIndexedInstance(this.home, marker.id, marker.instance)
    const path = markerPath(this.home, marker)
    if (entry.kind === 'settled' || entry.kind === 'gone') {
      unlinkQuietly(path)
      return false
    }
    if (entry.kind === 'damaged') {
      found.damaged.push({state_dir: entry.dir, error: entry.error})
      return true
    }
    if (entry.kind === 'creating') return true
    if (entry.kind === 'live') found.runs.push(entry.state)
    else if (entry.kind === 'unreported') found.runs.push(entry.state)
    else found.archived.push(entry.state)
    // The marker's form follows the instance: live ones are read by every live command, finished ones wait in the
    // queue. A Run read between its result and the mirror of its end time into run.json is queued by a later read.
    const meta = entry.state.meta
    const ending = entry.kind !== 'live' && typeof meta.ended_at !== 'string' && !marker.queued
    const wanted = entry.kind === 'live' ? key : ending ? undefined : queuedMarkerName(marker.id, marker.instance, meta)
    if (wanted && wanted !== marker.name) {
      try {
        // Renamed or dropped by another reader meanwhile: either way the entry is where it belongs.
        if (entry.kind === 'live') renameSync(path, indexDir(this.home) + sep + wanted)
        else enqueueMarker(this.home, ownerTag(meta.owner), wanted, path)
      } catch {}
    }
    return true
  }
}

/** Where the file of an index marker is: index/ for a live one, its owner's queue for a queued one. */
function markerPath(home: string, marker: Marker): string {
  return (marker.queued ? ownerQueueDir(home, marker.queued.owner) : indexDir(home)) + sep + marker.name
}

/**
 * Every live or unreported Run, read from its state dir (`queued: 'none'`:
 * the live markers only, what a command about live Runs needs). Cost: one
 * stat of runs/, one listing of the index, one read per entry read; the
 * index is rebuilt first when runs/ changed behind the kernel's back.
 */
export function readIndexedRuns(home: string, options: {queued?: 'all' | 'none'} = {}): IndexedRuns {
  const reader = new RunIndexReader(home)
  const found = reader.live()
  if (options.queued !== 'none') {
    const rest = reader.rest()
    found.runs.push(...rest.runs)
    found.archived.push(...rest.archived)
    found.damaged.push(...rest.damaged)
  }
  return found
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

export function newEnteredDirs(): EnteredDirs {
  return {launches: [], queues: new Set()}
}

/**
 * Enter the state dirs `job.names[start, end)` in the index (the part of a
 * rebuild each thread does; doing a dir twice is harmless: a marker made
 * again exists already). `keepRead`: remember what was read for this
 * command's next reads (justRead), on the thread that will do them.
 */
export function enterStateDirs(job: RebuildJob, start: number, end: number, found: EnteredDirs, keepRead: boolean): void {
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
      recordReported(dir, {run_instance_id: was, owner: meta.owner, batch_id: 'legacy', reported_at: new Date().toISOString()})
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
      const journal = readJsonFile<{owner?: unknown; reported?: unknown}>(join(home, 'delivery', file), {maxBytes: 64 * 1024 * 1024})
      if (typeof journal?.owner !== 'string' || !journal.reported || typeof journal.reported !== 'object') continue
      for (const [run, instance] of Object.entries(journal.reported as Record<string, unknown>)) {
        if (typeof instance === 'string') found.set(`${journal.owner}\u0000${run}`, instance)
      }
    } catch {}
  }
  return found
}
