/**
 * The markers of the run index (live-index.ts describes the index): the
 * names a live or queued marker has, taking a name apart and checking it,
 * the owner and tree tags, the batch order of queue keys, and adding and
 * dropping markers. Kept apart from the readers and the rebuild, which both
 * make and read these names, so neither depends on the other for them.
 */
import {sep} from 'node:path'
import {indexDir, isPlainName} from '../../base/platform/home.js'
import {compareText} from '../../base/platform/compare.js'
import {listOwnerQueue, ownerQueueDir, queueOwnerTags} from './index-queue.js'
import {liveMarkerFile} from '../runs/index-entry.js'
import {unlinkQuietly} from '../../base/platform/state-files.js'
import type {RunMeta} from '../../base/records/run.js'

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
  return unlinkQuietly(liveMarkerFile(home, id, instance))
}

/**
 * Remove the markers of delivered instances, in both forms. Members whose
 * run.json fields are in `metas` (by `run@instance`) are removed by name;
 * the others (a batch redelivered after its wait died, or a Run whose
 * run.json changed after its marker was named) cost one listing of the index.
 */
export function dropIndexMarkers(
  home: string,
  members: Array<{run: string; run_instance_id: string}>,
  metas: Map<string, MarkerFields> = new Map(),
): void {
  const unknown = new Set<string>()
  for (const m of members) {
    const key = m.run + '@' + m.run_instance_id
    if (!dropIndexMarker(home, m.run, m.run_instance_id, metas.get(key))) unknown.add(key)
  }
  if (unknown.size === 0) return
  for (const tag of queueOwnerTags(home)) {
    for (const name of listOwnerQueue(home, tag)) {
      const parsed = parseMarker(name)
      if (parsed?.queued && unknown.has(parsed.id + '@' + parsed.instance) && validMarker(parsed))
        unlinkQuietly(ownerQueueDir(home, tag) + sep + name)
    }
  }
}

/** Where a queued entry sorts: the order of completion batches (select.ts), known from the marker's name. */
export interface QueueKey {
  ended: string
  run: string
  instance: string
}

/** A marker name taken apart (parseMarker). */
export interface Marker {
  name: string
  id: string
  instance: string
  /** Set for a queued marker. */
  queued?: QueueKey & {owner: string; root: string}
}

/** What starts a queued marker's name, and separates its parts. */
export const QUEUED_PREFIX = '~'
/** QUEUED_PREFIX as a char code, for checks that make no string. */
export const QUEUED_CODE = QUEUED_PREFIX.charCodeAt(0)
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
export function queuedMarkerName(id: string, instance: string, meta: MarkerFields): string | undefined {
  if (!isPlainName(id) || !isPlainName(instance) || typeof meta.owner !== 'string') return undefined
  return `${QUEUED_PREFIX}${endedKey(meta)}${QUEUED_PREFIX}${ownerTag(meta.owner)}${QUEUED_PREFIX}${treeTag(meta)}${QUEUED_PREFIX}${id}@${instance}`
}

let lastOwner: {owner: string; tag: string} | undefined
/** markerTag of an owner: a command's Runs mostly share one, so the last is kept. */
export function ownerTag(owner: string): string {
  if (lastOwner?.owner !== owner) lastOwner = {owner, tag: markerTag(owner)}
  return lastOwner.tag
}

/**
 * Split a marker name into its parts, cheaply: a plain wait lists every
 * queued marker of the index to pick the oldest. The parts are checked
 * (validMarker) only for the markers actually read.
 */
export function parseMarker(name: string): Marker | undefined {
  const at = name.lastIndexOf('@')
  if (at <= 0) return undefined
  const instance = name.slice(at + 1)
  if (name.charCodeAt(0) !== QUEUED_CODE) return {name, id: name.slice(0, at), instance}
  const end = queuedEnd(name)
  if (end === -1) return undefined
  const id = name.slice(end + 19, at)
  const ended = name.slice(1, end)
  return {
    name,
    id,
    instance,
    queued: {ended, run: id, instance, owner: name.slice(end + 1, end + 9), root: name.slice(end + 10, end + 18)},
  }
}

/** Whether a parsed marker is one the kernel could have written (anything else is not the index's: left alone). */
export function validMarker(marker: Marker): boolean {
  if (!isPlainName(marker.id) || !isPlainName(marker.instance)) return false
  const queued = marker.queued
  return (
    !queued || (ENDED_PATTERN.test(queued.ended) && TAG_PATTERN.test(queued.owner) && TAG_PATTERN.test(queued.root))
  )
}

/** Batch order of two queue keys (end time, run id, instance), as select.ts orders trees. */
export function compareQueueKeys(a: QueueKey, b: QueueKey): number {
  return compareText(a.ended, b.ended) || compareText(a.run, b.run) || compareText(a.instance, b.instance)
}

/**
 * Where the end time of a queued marker name (`~<ended>~<owner: 8>~<root: 8>~<run>@<instance>`) ends: the
 * index of the `~` after it; -1 when the name does not have that shape. Found without allocating: a plain wait
 * looks at every queued name of its queue. The name is `text[start, stop)` (a line of a cursor) or all of it.
 */
export function queuedEnd(text: string, start = 0, stop = text.length): number {
  const end = text.indexOf(QUEUED_PREFIX, start + 1)
  const at = text.lastIndexOf('@', stop - 1)
  if (
    end < start + 2 ||
    at < start ||
    at <= end + 19 ||
    text.charCodeAt(end + 9) !== QUEUED_CODE ||
    text.charCodeAt(end + 18) !== QUEUED_CODE
  )
    return -1
  return end
}

/** Where the file of an index marker is: index/ for a live one, its owner's queue for a queued one. */
export function markerPath(home: string, marker: Marker): string {
  return (marker.queued ? ownerQueueDir(home, marker.queued.owner) : indexDir(home)) + sep + marker.name
}
