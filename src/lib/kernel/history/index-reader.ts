/**
 * Reading the run index (live-index.ts): the live markers, then the queued
 * ones oldest first, a window at a time, each entry read from its state dir
 * (indexed-instance.ts) and its marker kept in the form that instance needs.
 * What `wait`, `inspect`, singleton checks and the live views read Runs through.
 */
import {renameSync} from 'node:fs'
import {sep} from 'node:path'
import {indexDir} from '../../base/platform/home.js'
import {enqueueMarker, listOwnerQueue, queueOwnerTags, tagValue} from './index-queue.js'
import {QueueCursor, writeQueueCursor} from './queue-cursor.js'
import {unlinkQuietly} from '../../base/platform/state-files.js'
import type {RunState} from '../runs/store.js'
import {listIndex} from './live-index.js'
import {
  markerPath,
  markerTag,
  ownerTag,
  parseMarker,
  QUEUED_CODE,
  QUEUED_PREFIX,
  queuedEnd,
  queuedMarkerName,
  validMarker,
  type Marker,
  type QueueKey,
} from './index-markers.js'
import {compareQueuedNames, CursorQueue, followsInOrder, listedQueue, type QueueNames} from './index-queue-order.js'
import {readIndexedInstance} from './indexed-instance.js'
import {refreshIndex} from './index-rebuild.js'

/** Index entries read, by what they are. */
export interface IndexedRuns {
  /** Live Runs and finished, unreported ones (every owner), in no particular order. */
  runs: RunState[]
  /** Earlier generations not yet reported (every owner): dirs are generations/<n>/. Only `wait` delivers them. */
  archived: RunState[]
  damaged: Array<{state_dir: string; error: string}>
}

const noRuns = (): IndexedRuns => ({runs: [], archived: [], damaged: []})

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

  constructor(
    private readonly home: string,
    options: {owner?: string; cursor?: boolean} = {},
  ) {
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
    const names =
      tags.length === 1 ? listOwnerQueue(this.home, tags[0]) : tags.flatMap((tag) => listOwnerQueue(this.home, tag))
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
      if (kept && this.queue instanceof CursorQueue && !this.queue.lines[this.next].shared)
        this.loneRoots.add(this.queue.lines[this.next].root)
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
