/**
 * The cache behind a plain `inspect --json` (every Run, no filter): per
 * finished Run, the exact bytes its summary has inside the printed document,
 * so a warm listing copies those bytes from the file to stdout instead of
 * building 2,000 summary objects, stringifying and encoding them again.
 *
 * Staleness works as in ./listing-cache.ts (read its header): an entry serves
 * while run.json keeps the key it had when the entry was made, one stat per
 * Run. Only finished Runs whose run.json names their own id and state dir are
 * kept, as there, and only those whose id and created_at are ASCII (the
 * listing compares them as bytes).
 *
 * Beyond start-up and the stats, what a warm listing of 2,000 Runs cost was
 * mostly memory: objects and strings per Run (garbage collection), a buffer
 * of the whole file (first touches of fresh pages cost more than reading
 * into them), and small functions called per Run, which V8 then compiled at
 * a cost of milliseconds. So the file is read without an object, a string
 * or a call per Run: a compact JSON line
 *   {"schema":"actors-listing-text-v3","endian":"LE","base":"<runs dir>/","count":N,"list":LB,"names":NB,"body":BB}
 * then, in the machine's byte order (`endian`), the N entries' sections, in
 * listing order (created_at, then Run id):
 *   keys:   N × 6 float64: the exact key of the run.json each text was made
 *           from (inode, size, mtime and ctime in seconds and nanoseconds:
 *           platform/file-key.ts exactFileKeysInto)
 *   fields: N × 5 uint32: the text's length, its Run dir (an index in
 *           `list`), and where its Run id and created_at lie in `names`
 *           (offset, id length, created_at length)
 *   list:   LB bytes, UTF-8: the names of the Run dirs the listing saw when
 *           it wrote the file, sorted, joined by `/` (which no name holds)
 *   names:  NB bytes: the entries' Run ids and created_at values (ASCII)
 *   body:   BB bytes: each entry's text followed by a NUL and a newline
 *           (JSON text never holds a raw NUL: inside strings it is escaped).
 * A listing sorts the Run dirs' names and joins them: when that equals
 * `list` (one string comparison), an entry's dir index is its dir's index
 * now; otherwise they are matched by name, and the file is rewritten. It
 * keys the entries' run.json files into one array in entry order and
 * compares it with `keys` as bytes, in blocks: an entry whose key is
 * unchanged is a hit. Every other Run dir is read fresh. The hits' texts are
 * copied from the body to stdout through one reused 64 KiB buffer, each
 * separator's NUL made a comma (the separator is exactly the `,\n` between
 * Runs in the document), and the Runs read fresh are merged in where a
 * binary search of `names` places them.
 *
 * What is read is checked before it is trusted: the header (schema, byte
 * order, the base: a state root moved elsewhere prints other state dirs),
 * the sections' sizes against the file's, the names ASCII and in range, no
 * Run dir claimed by two entries. Every separator is checked where the
 * lengths say as the body goes by, and a text is printed only once no other
 * NUL, and no other control byte but the newline, was found in it: JSON text
 * holds none raw, so a file edited in place never puts a control sequence on
 * a terminal. (Its texts are not parsed again: that would cost a warm
 * listing a tenth more, and the file is a record its user can write, like
 * run.json, see docs/containment.md.) A file that fails a check before the output starts
 * is no cache: every Run is read, and the file written anew. A text that
 * fails while printing is read from its Run instead, with every hit after
 * it, and the file is rewritten. Never a wrong listing.
 *
 * The module's face is listingTexts (and the ReadFresh it is given); below
 * it, in the order a listing runs them: the file's layout, opening and
 * checking it; matching its entries with the Run dirs now (the join);
 * printing; writing the file anew.
 */
import {closeSync, constants, fstatSync, openSync, readSync} from 'node:fs'
import {isAscii} from 'node:buffer'
import {dirname, join, sep} from 'node:path'
import {historyCacheDir} from '../../base/platform/home.js'
import {EXACT_KEY_LENGTH, exactFileKeysInto} from '../../base/platform/file-key.js'
import {compareText} from '../../base/platform/compare.js'
import {makePrivateDir} from '../../base/platform/private-files.js'
import {unlinkQuietly, writeFileAtomic} from '../../base/platform/state-files.js'
import {RUN_FILES} from '../runs/store.js'

/** A Run's printed text read from its state dir (a cache miss), with what orders it in the listing. */
export interface FreshText {
  created: string
  /** Run id: the listing's second sort key. */
  run: string
  text: Buffer
  /** Whether the cache may keep it (a finished Run, see above), under the key its run.json had before it was read. */
  cacheable: boolean
}

/** Read Run dir `id` (`keyed`: its run.json is a regular file); undefined: no Run to list there. */
export type ReadFresh = (id: string, keyed: boolean) => FreshText | undefined

/**
 * The printed texts of the Run dirs `runIds` (sorted here, in place) under
 * `base` (the runs dir with a trailing separator), in listing order, as
 * pieces of the document between its `[` and `]`: the Runs' texts with
 * `,\n` between them. Cached texts of Runs whose run.json is unchanged come
 * from the cache file; every other Run dir is read with `readFresh`. A piece
 * may be a reused buffer: it is valid only until the next one is taken. Once
 * all were taken, the cache is rewritten when it gained entries, lost most of
 * them, was damaged or the Run dirs changed (best effort, without fsync: it
 * is only a cache).
 */
export function* listingTexts(
  home: string,
  base: string,
  runIds: string[],
  readFresh: ReadFresh,
): Generator<Uint8Array> {
  const file = listingTextFile(home)
  const window = Buffer.allocUnsafeSlow(WINDOW_BYTES)
  const ids = runIds.sort()
  const list = ids.join('/')
  const cache = openCache(file, base, window)
  try {
    const joined = joinRuns(cache, base, ids, list, readFresh)
    // Without hits the body is not read.
    const printer = new Printer(joined.hits > 0 ? cache : undefined, joined, window)
    yield* printer.print(readFresh)
    const changed =
      !joined.sameDirs ||
      joined.added > 0 ||
      joined.damaged ||
      printer.damaged ||
      (cache !== undefined && joined.hits * 2 < cache.count)
    if (changed) saveCache(file, base, list, cache, joined, printer.printed)
  } finally {
    if (cache) closeSync(cache.fd)
  }
}

// The file: its layout's constants, where it is, opening and checking it up to its body.

/** The schema the header line names: a file of another is no cache. */
const SCHEMA = 'actors-listing-text-v3'
/** The machine's byte order, which the typed arrays in the file are in. */
const ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1 ? 'LE' : 'BE'
/** Past this a cache is not read (the listing then reads every run.json and rewrites it). */
const MAX_CACHE_BYTES = 64 * 1024 * 1024
/** Numbers per key (exact keys: platform/file-key.ts), and bytes of `keys` and `fields` per entry. */
const K = EXACT_KEY_LENGTH
const KEY_BYTES = K * 8
const FIELD_BYTES = 20
/** The reused buffer the body is copied through (the header line must fit in it too). */
const WINDOW_BYTES = 64 * 1024
/** The bytes a separator is checked and rewritten with: NUL, newline, comma. */
const NUL = 0
const NEWLINE = 10
const COMMA = 44
/** A byte JSON text never holds raw: a control character but the newline (NUL, the separators' own, among them). */
const CONTROL_BYTE = /[\x00-\x09\x0b-\x1f]/
/** Between two Runs' texts in the document (jsonAtDepth's own separator at depth 1). */
const SEPARATOR = Buffer.from(',\n')

/** The cache file of state root `home`. */
function listingTextFile(home: string): string {
  return join(historyCacheDir(home), 'listing-text')
}

/** An open cache file, checked up to its body (which is checked as it is read): its sections (the layout above). */
interface Cache {
  fd: number
  size: number
  count: number
  /** `keys`, as bytes and as numbers. */
  keyBytes: Buffer
  keys: Float64Array
  fields: Uint32Array
  list: string
  /** `names`: where in the file, and its bytes once read (null: damaged); read only when needed (see namesOf). */
  namesAt: number
  namesLength: number
  names?: Buffer | null
  bodyAt: number
}

/** The cache file, or undefined: missing, damaged or foreign. */
function openCache(file: string, base: string, window: Buffer): Cache | undefined {
  let fd: number
  try {
    // O_NONBLOCK: a FIFO planted where the cache belongs must not hang the listing.
    fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW)
  } catch {
    return undefined
  }
  try {
    const cache = readIndex(fd, base, window)
    if (cache) return cache
  } catch {}
  closeSync(fd)
  return undefined
}

/** The header line, as parsed (every field checked before use). */
interface Header {
  schema?: unknown
  endian?: unknown
  base?: unknown
  count?: unknown
  list?: unknown
  names?: unknown
  body?: unknown
}

/** Read and check the header and the sections before the body of the open file `fd`; undefined: no cache. */
function readIndex(fd: number, base: string, window: Buffer): Cache | undefined {
  const stat = fstatSync(fd)
  const size = stat.size
  if (!stat.isFile() || size > MAX_CACHE_BYTES) return undefined
  const newline = window.subarray(0, readFully(fd, window, 0, Math.min(size, WINDOW_BYTES), 0)).indexOf(NEWLINE)
  if (newline < 0) return undefined
  const head = JSON.parse(window.toString('utf8', 0, newline)) as Header
  const {count, list, names} = head
  if (head.schema !== SCHEMA || head.endian !== ENDIAN || head.base !== base) return undefined
  if (!isSize(count) || !isSize(list) || !isSize(names) || !isSize(head.body)) return undefined
  const listAt = count * (KEY_BYTES + FIELD_BYTES)
  const namesAt = newline + 1 + listAt + list
  const bodyAt = namesAt + names
  if (bodyAt + head.body !== size) return undefined
  // Its own ArrayBuffer, at offset 0: the typed arrays below need their elements aligned.
  const index = Buffer.allocUnsafeSlow(listAt + list)
  if (readFully(fd, index, 0, index.length, newline + 1) !== index.length) return undefined
  return {
    fd,
    size,
    count,
    keyBytes: index.subarray(0, count * KEY_BYTES),
    keys: new Float64Array(index.buffer, 0, count * K),
    fields: new Uint32Array(index.buffer, count * KEY_BYTES, count * 5),
    list: index.toString('utf8', listAt),
    namesAt,
    namesLength: names,
    bodyAt,
  }
}

const isSize = (value: unknown): value is number => Number.isSafeInteger(value) && (value as number) >= 0

/**
 * The cache's `names`, read and checked on first use: only to place fresh
 * texts among the hits, or to rewrite the file. Undefined when damaged:
 * not ASCII, or an entry's id (never empty) or created_at outside them.
 */
function namesOf(cache: Cache): Buffer | undefined {
  if (cache.names === undefined) {
    const {count, fields} = cache
    const names = Buffer.allocUnsafe(cache.namesLength)
    let sound = readFully(cache.fd, names, 0, names.length, cache.namesAt) === names.length && isAscii(names)
    for (let f = 0; sound && f < count * 5; f += 5)
      sound = fields[f + 3] > 0 && fields[f + 2] + fields[f + 3] + fields[f + 4] <= names.length
    cache.names = sound ? names : null
  }
  return cache.names ?? undefined
}

/** Read `length` bytes at file offset `position` into `into` from `at`; the count read (short at the end of the file). */
function readFully(fd: number, into: Uint8Array, at: number, length: number, position: number): number {
  let done = 0
  while (done < length) {
    const n = readSync(fd, into, at + done, length - done, position + done)
    if (n === 0) break
    done += n
  }
  return done
}

// The join: which entries still serve, which Runs are read fresh and where each goes among the hits.

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
interface Fresh extends FreshText {
  dir: number
  key: Float64Array
}

const ASCII = /^[\x00-\x7f]*$/

/** readFresh() of dir `dir` (its run.json had `keys[at...]`), not cacheable when its id or created_at is not ASCII (compared as bytes). */
function readFreshText(
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
const byListingOrder = (a: FreshText, b: FreshText) => compareText(a.created, b.created) || compareText(a.run, b.run)

/** What the join found: which entries still serve, and the Runs read fresh. */
interface Joined {
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
function joinRuns(cache: Cache | undefined, base: string, ids: string[], list: string, readFresh: ReadFresh): Joined {
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

// Printing: the cached texts streamed from the body, checked on the way, the fresh ones merged in.

/** What the listing printed, in order: a cache entry (its number) or a fresh text; what a rewritten cache holds. */
type Printed = number | Fresh

/**
 * Prints a joined listing: the body streamed through one buffer (the
 * window), every separator checked on the way, the hits' texts printed in
 * pieces (neighbours in the body together), the fresh texts between them.
 * A piece that follows printed text starts with its `,\n`, and a piece is
 * printed only once checked, so a damaged text found mid-listing leaves
 * nothing half printed: it and every hit after it are read fresh instead.
 */
class Printer {
  /** Whether a cached text failed its check. */
  damaged = false
  readonly printed: Printed[] = []
  private buffer: Buffer
  /** The body bytes in the buffer: file offsets [from, to). */
  private from = 0
  private to = 0
  /**
   * The piece being gathered: the texts of entries first..last, at
   * buffer[start, end), the first text at `textStart` (before it, the `,\n`
   * that leads the piece, if any); none while first < 0.
   */
  private first = -1
  private last = -1
  private start = 0
  private end = 0
  private textStart = 0
  /** The piece needs a `,\n` of its own (it starts at the body's start, where no separator precedes it). */
  private separately = false
  /** Whether anything was printed, or is about to be (gathered fresh texts): what follows needs its `,\n`. */
  private any = false
  /** Where the damage found starts: hits from this entry on are read fresh. */
  private failedAt = 0
  private readonly freshPart: Uint8Array[] = []

  constructor(
    private readonly cache: Cache | undefined,
    private readonly joined: Joined,
    window: Buffer,
  ) {
    this.buffer = window
  }

  *print(readFresh: ReadFresh): Generator<Uint8Array> {
    const {cache, joined} = this
    const {hit, fresh, before} = joined
    let next = 0
    for (let p = 0, at = cache?.bodyAt ?? 0; cache && p < cache.count; p++) {
      const textAt = at
      const textEnd = at + cache.fields[p * 5]
      at = textEnd + 2
      if (next < fresh.length && before[next] <= p) {
        if (!(yield* this.closePiece())) return yield* this.printRest(next, readFresh)
        while (next < fresh.length && before[next] <= p) this.addFresh(fresh[next++])
        yield* this.flushFresh()
      }
      // The window holds this text, its separator and the one before it (a piece starting here is led by it).
      const from = p > 0 ? textAt - 2 : textAt
      if (from < this.from || textEnd + 2 > this.to) {
        if (!(yield* this.closePiece())) return yield* this.printRest(next, readFresh)
        if (!this.refill(from, textEnd + 2)) {
          this.failedAt = p
          return yield* this.printRest(next, readFresh)
        }
      }
      const buffer = this.buffer
      const end = textEnd - this.from
      if (buffer[end] !== NUL || buffer[end + 1] !== NEWLINE) {
        this.failedAt = this.first >= 0 ? this.first : p
        this.first = -1
        return yield* this.printRest(next, readFresh)
      }
      if (!hit[p]) continue
      if (this.first >= 0 && p !== this.last + 1 && !(yield* this.closePiece()))
        return yield* this.printRest(next, readFresh)
      if (this.first < 0) {
        const textStart = textAt - this.from
        const lead = this.any && p > 0
        // The previous entry's separator; a comma already when that entry was gathered from this window.
        if (
          lead &&
          ((buffer[textStart - 2] !== NUL && buffer[textStart - 2] !== COMMA) || buffer[textStart - 1] !== NEWLINE)
        ) {
          this.failedAt = p
          return yield* this.printRest(next, readFresh)
        }
        if (lead) buffer[textStart - 2] = COMMA
        this.first = p
        this.textStart = textStart
        this.start = lead ? textStart - 2 : textStart
        this.separately = this.any && p === 0
      }
      buffer[end] = COMMA
      this.last = p
      this.end = end
    }
    if (!(yield* this.closePiece())) return yield* this.printRest(next, readFresh)
    while (next < fresh.length) this.addFresh(fresh[next++])
    yield* this.flushFresh()
  }

  /** Read the body from file offset `from` into the window, at least up to `to`; false: the file ends before. */
  private refill(from: number, to: number): boolean {
    const cache = this.cache!
    if (to - from > this.buffer.length) this.buffer = Buffer.allocUnsafe(to - from)
    this.from = from
    this.to = from + readFully(cache.fd, this.buffer, 0, Math.min(this.buffer.length, cache.size - from), from)
    return to <= this.to
  }

  /**
   * Print the gathered piece, once no NUL nor other control byte but the
   * newline is left in its texts (their separators are commas by now);
   * false: damaged.
   */
  private *closePiece(): Generator<Uint8Array, boolean> {
    const {first, last} = this
    if (first < 0) return true
    this.first = -1
    // One latin1 string of the piece (a byte per character, one copy) searched by one regular expression.
    if (CONTROL_BYTE.test(this.buffer.toString('latin1', this.textStart, this.end))) {
      this.failedAt = first
      return false
    }
    if (this.separately) yield SEPARATOR
    this.any = true
    yield this.buffer.subarray(this.start, this.end)
    for (let p = first; p <= last; p++) this.printed.push(p)
    return true
  }

  /** After damage: the hits from `failedAt` on, read from their Runs, and the fresh texts from `next` on, in listing order. */
  private *printRest(next: number, readFresh: ReadFresh): Generator<Uint8Array> {
    this.damaged = true
    const {hit, dirOf, ids, keys, fresh} = this.joined
    const rest = fresh.slice(next)
    for (let p = this.failedAt; p < this.cache!.count; p++) {
      const entry = hit[p] ? readFreshText(readFresh, ids, dirOf[p], keys, p * K) : undefined
      if (entry) rest.push(entry)
    }
    for (const entry of rest.sort(byListingOrder)) this.addFresh(entry)
    yield* this.flushFresh()
  }

  private addFresh(entry: Fresh): void {
    if (this.any) this.freshPart.push(SEPARATOR)
    this.freshPart.push(entry.text)
    this.any = true
    this.printed.push(entry)
  }

  /** Print the gathered fresh texts, as one piece. */
  private *flushFresh(): Generator<Uint8Array> {
    const part = this.freshPart
    if (part.length) yield part.length === 1 ? part[0] : Buffer.concat(part)
    part.length = 0
  }
}

// Writing the file anew after a listing.

/**
 * Write the cache anew: the Run dirs `list` names, and the `printed`
 * entries it may keep, in listing order, with the keys their run.json files
 * had before they were read, cached texts copied from the old file. The body
 * is checked as a read checks it before it is written; on any failure the
 * old file is removed rather than left to be read again.
 */
function saveCache(
  file: string,
  base: string,
  list: string,
  cache: Cache | undefined,
  joined: Joined,
  printed: Printed[],
): void {
  try {
    makePrivateDir(dirname(file))
    writeFileAtomic(file, buildCache(base, list, cache, joined, printed), {durable: false})
  } catch {
    unlinkQuietly(file)
  }
}

/** The bytes of the new cache file (see saveCache); throws when a text or the old file is damaged. */
function buildCache(base: string, list: string, cache: Cache | undefined, joined: Joined, printed: Printed[]): Buffer {
  const entries = printed.filter((e) => typeof e === 'number' || e.cacheable)
  const count = entries.length
  const listBytes = Buffer.from(list)
  const index = Buffer.alloc(count * (KEY_BYTES + FIELD_BYTES))
  const keys = new Float64Array(index.buffer, index.byteOffset, count * K)
  const fields = new Uint32Array(index.buffer, index.byteOffset + count * KEY_BYTES, count * 5)
  const oldNames = cache && printed.some((e) => typeof e === 'number') ? namesOf(cache)?.toString('latin1') : undefined
  // Names as one string (ASCII: a byte per character), encoded once: thousands of small buffers cost a cold listing.
  const names: string[] = []
  // The body's pieces, in order: a fresh text, or old entries' texts with their separators (offsets [from, to) of the old file).
  const pieces: Array<Buffer | [number, number]> = []
  const oldTextAt = new Float64Array(cache?.count ?? 0)
  for (let p = 0, at = cache?.bodyAt ?? 0; cache && p < cache.count; at += cache.fields[p * 5] + 2, p++)
    oldTextAt[p] = at
  let namesBytes = 0
  let body = 0
  entries.forEach((e, i) => {
    let name: string, idLength: number, length: number, dir: number
    if (typeof e === 'number') {
      const f = e * 5
      const old = cache!.fields
      if (oldNames === undefined) throw new Error('the old cache file has damaged names')
      ;[name, idLength, length, dir] = [
        oldNames.slice(old[f + 2], old[f + 2] + old[f + 3] + old[f + 4]),
        old[f + 3],
        old[f],
        joined.dirOf[e],
      ]
      keys.set(joined.keys.subarray(e * K, e * K + K), i * K)
      const last = pieces.at(-1)
      if (Array.isArray(last) && last[1] === oldTextAt[e]) last[1] += length + 2
      else pieces.push([oldTextAt[e], oldTextAt[e] + length + 2])
    } else {
      ;[name, idLength, length, dir] = [e.run + e.created, e.run.length, e.text.length, e.dir]
      keys.set(e.key, i * K)
      pieces.push(e.text)
    }
    const f = i * 5
    fields[f] = length
    fields[f + 1] = dir
    fields[f + 2] = namesBytes
    fields[f + 3] = idLength
    fields[f + 4] = name.length - idLength
    names.push(name)
    namesBytes += name.length
    body += length + 2
  })
  const head = Buffer.from(
    JSON.stringify({schema: SCHEMA, endian: ENDIAN, base, count, list: listBytes.length, names: namesBytes, body}) +
      '\n',
  )
  const out = Buffer.allocUnsafe(head.length + index.length + listBytes.length + namesBytes + body)
  out.set(head, 0)
  out.set(index, head.length)
  out.set(listBytes, head.length + index.length)
  let at = head.length + index.length + listBytes.length
  at += out.write(names.join(''), at, 'latin1')
  const bodyAt = at
  for (const piece of pieces) {
    if (!Array.isArray(piece)) {
      out.set(piece, at)
      at += piece.length
      out[at++] = NUL
      out[at++] = NEWLINE
    } else if (readFully(cache!.fd, out, at, piece[1] - piece[0], piece[0]) === piece[1] - piece[0]) {
      at += piece[1] - piece[0]
    } else {
      throw new Error('the old cache file changed while it was read')
    }
  }
  checkBody(out, bodyAt, fields, count)
  return out
}

/** Check the body as a read checks it: each separator where the lengths say (made a comma for the moment), and no other NUL. */
function checkBody(out: Buffer, bodyAt: number, fields: Uint32Array, count: number): void {
  const ends: number[] = []
  for (let i = 0, textAt = bodyAt; i < count; textAt += fields[i * 5] + 2, i++) ends.push(textAt + fields[i * 5])
  if (!ends.every((end) => out[end] === NUL && out[end + 1] === NEWLINE)) throw new Error('a damaged text')
  for (const end of ends) out[end] = COMMA
  const sound = out.indexOf(NUL, bodyAt) < 0
  for (const end of ends) out[end] = NUL
  if (!sound) throw new Error('a damaged text')
}
