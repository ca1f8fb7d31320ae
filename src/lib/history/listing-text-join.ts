/**
 * The join of the listing text cache (listing-text-cache.ts) with the Run
 * dirs a listing sees now: which entries still serve (their run.json keeps
 * its key), and which Runs are read fresh and where each goes among the
 * hits. What the printer prints and the writer keeps.
 */
import {sep} from 'node:path'
import {compareText} from '../platform/compare.js'
import {exactFileKeysInto} from '../platform/file-key.js'
import {RUN_FILES} from '../runs/store.js'
import {K, KEY_BYTES, namesOf, type Cache, type FreshText, type ReadFresh} from './listing-text-file.js'

/** Entries per block of keys compared as bytes at once. */
const KEY_BLOCK = 64
/** No such Run dir. */
const NONE = 0xffffffff

/** `text` against the ASCII bytes `names[at, at + length)`, in compareText's order, without making a string of them. */
function compareWithBytes(text: string, names: Buffer, at: number, length: number): number {
  for (let i = 0; i < text.length && i < length; i++) {
    const difference = text.charCodeAt(i) - names[at + i]
    if (difference !== 0) return difference
  }
  return text.length - length
}

/** A fresh text, the Run dir it was read from (its index in the sorted ids) and that run.json's key when it was read. */
export interface Fresh extends FreshText {
  dir: number
  key: Float64Array
}

const ASCII = /^[\x00-\x7f]*$/

/** readFresh() of dir `dir` (its run.json had `keys[at...]`), not cacheable when its id or created_at is not ASCII (compared as bytes). */
export function readFreshText(
  readFresh: ReadFresh,
  ids: string[],
  dir: number,
  keys: Float64Array,
  at: number,
): Fresh | undefined {
  const key = keys.subarray(at, at + K)
  const entry = readFresh(ids[dir], !Number.isNaN(key[0])) as Fresh | undefined
  if (!entry) return undefined
  entry.dir = dir
  entry.key = key
  if (entry.cacheable && !(ASCII.test(entry.run) && ASCII.test(entry.created))) entry.cacheable = false
  return entry
}

/** Listing order of two texts: created_at, then Run id. */
export const byListingOrder = (a: FreshText, b: FreshText) =>
  compareText(a.created, b.created) || compareText(a.run, b.run)

/** What the join found: which entries still serve, and the Runs read fresh. */
export interface Joined {
  ids: string[]
  /** Per entry: 1 when it serves (its Run dir's run.json still has its key). */
  hit: Uint8Array
  hits: number
  /** Per entry, its Run dir now (an index in `ids`; NONE: gone), and the key that dir's run.json has. */
  dirOf: Uint32Array
  keys: Float64Array
  /** The Runs read fresh, in listing order, and before which entry each goes (count: after all). */
  fresh: Fresh[]
  before: number[]
  /** How many fresh texts the cache may keep. */
  added: number
  /** Whether the Run dirs are those the cache lists. */
  sameDirs: boolean
  /** Whether the cache's names were damaged (every Run was read fresh). */
  damaged: boolean
}

/**
 * Find each entry's Run dir now (by index when the dirs are those the cache
 * lists, else by name), key the entries' run.json files in entry order and
 * compare the keys with the cache's, as bytes in blocks: an unchanged key is
 * a hit. Every other Run dir (a changed key, or no entry) is keyed too, then
 * read fresh.
 */
export function joinRuns(
  cache: Cache | undefined,
  base: string,
  ids: string[],
  list: string,
  readFresh: ReadFresh,
): Joined {
  const count = cache?.count ?? 0
  const sameDirs = cache !== undefined && cache.list === list
  const dirOf = cache ? entryDirs(cache, ids, sameDirs) : new Uint32Array(0)
  const claimed = new Uint8Array(ids.length)
  const entryNames: string[] = new Array(count)
  for (let p = 0; p < count; p++) {
    const dir = dirOf[p]
    // An entry's dir is its own: a second entry naming it (a damaged file) is no entry.
    if (dir < ids.length && claimed[dir] === 0) {
      claimed[dir] = 1
      entryNames[p] = ids[dir]
    } else {
      dirOf[p] = NONE
      entryNames[p] = ''
    }
  }
  const keys = new Float64Array(count * K)
  exactFileKeysInto(base, entryNames, sep + RUN_FILES.meta, keys)
  // An entry without a dir has no key (its name above was a stand-in).
  for (let p = 0; p < count; p++) if (dirOf[p] === NONE) keys.fill(NaN, p * K, p * K + K)
  const hit = new Uint8Array(count)
  const fresh: Fresh[] = []
  let hits = 0
  let added = 0
  const add = (entry: Fresh | undefined) => {
    if (!entry) return
    if (entry.cacheable) added++
    fresh.push(entry)
  }
  let same = false
  for (let p = 0; p < count; p++) {
    if (p % KEY_BLOCK === 0) same = keysEqual(keys, cache!.keyBytes, p, Math.min(p + KEY_BLOCK, count))
    // NaN (no run.json, no dir) never equals; as bytes it could, were it in the file.
    if (dirOf[p] !== NONE && !Number.isNaN(keys[p * K]) && (same || keyAt(keys, cache!.keys, p))) {
      hit[p] = 1
      hits++
    } else if (dirOf[p] !== NONE) {
      add(readFreshText(readFresh, ids, dirOf[p], keys, p * K))
    }
  }
  // The Run dirs no entry names: live Runs, new ones, damaged ones.
  const others: string[] = []
  const otherDirs: number[] = []
  for (let dir = 0; dir < ids.length; dir++) {
    if (claimed[dir] === 0) {
      others.push(ids[dir])
      otherDirs.push(dir)
    }
  }
  const otherKeys = new Float64Array(others.length * K)
  exactFileKeysInto(base, others, sep + RUN_FILES.meta, otherKeys)
  otherDirs.forEach((dir, i) => {
    add(readFreshText(readFresh, ids, dir, otherKeys, i * K))
  })
  // Placing fresh texts among the hits takes the cache's names; damaged, the hits are read fresh too.
  const names = cache && hits > 0 && fresh.length > 0 ? namesOf(cache) : undefined
  const damaged = names === undefined && hits > 0 && fresh.length > 0
  for (let p = 0; damaged && p < count; p++) if (hit[p] === 1) add(readFreshText(readFresh, ids, dirOf[p], keys, p * K))
  if (damaged) {
    hit.fill(0)
    hits = 0
  }
  fresh.sort(byListingOrder)
  const before = fresh.map((entry) => (names ? placeOf(cache!, names, entry) : 0))
  return {ids, hit, hits, dirOf, keys, fresh, before, added, sameDirs, damaged}
}

/** Each entry's Run dir now, an index in `ids` (NONE: gone): the same index when the dirs are those the cache lists, else found by name. */
function entryDirs(cache: Cache, ids: string[], sameDirs: boolean): Uint32Array {
  const dirOf = new Uint32Array(cache.count)
  const {fields} = cache
  if (sameDirs) {
    for (let p = 0; p < cache.count; p++) dirOf[p] = fields[p * 5 + 1]
    return dirOf
  }
  const old = cache.list ? cache.list.split('/') : []
  const now = new Map(ids.map((id, dir) => [id, dir]))
  for (let p = 0; p < cache.count; p++) dirOf[p] = now.get(old[fields[p * 5 + 1]]) ?? NONE
  return dirOf
}

/** Whether entries [from, to) have the same keys in `keys` as in the cache's `keyBytes`: compared as bytes, in one call. */
function keysEqual(keys: Float64Array, cached: Buffer, from: number, to: number): boolean {
  return Buffer.from(keys.buffer, keys.byteOffset + from * KEY_BYTES, (to - from) * KEY_BYTES).equals(
    cached.subarray(from * KEY_BYTES, to * KEY_BYTES),
  )
}

/** Whether entry `p` has the same key in `keys` as in the cache's. */
function keyAt(keys: Float64Array, cached: Float64Array, p: number): boolean {
  for (let at = p * K; at < p * K + K; at++) if (keys[at] !== cached[at]) return false
  return true
}

/** The first entry that sorts after `entry` (created_at, then Run id): a binary search of the entries, which are in listing order. */
function placeOf({count, fields}: Cache, names: Buffer, entry: FreshText): number {
  let low = 0
  let high = count
  while (low < high) {
    const middle = (low + high) >>> 1
    const f = middle * 5
    const order =
      compareWithBytes(entry.created, names, fields[f + 2] + fields[f + 3], fields[f + 4]) ||
      compareWithBytes(entry.run, names, fields[f + 2], fields[f + 3])
    if (order < 0) high = middle
    else low = middle + 1
  }
  return low
}
