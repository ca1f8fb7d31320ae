/**
 * The file of the listing text cache (listing-text-cache.ts describes its
 * layout): the constants of that layout, where the file is, and opening and
 * checking it up to its body (the `names` section read and checked on first
 * use). What the join, the printer and the writer share, so it sits below them.
 */
import {closeSync, constants, fstatSync, openSync, readSync} from 'node:fs'
import {isAscii} from 'node:buffer'
import {join} from 'node:path'
import {historyCacheDir} from '../platform/home.js'
import {EXACT_KEY_LENGTH} from '../platform/file-key.js'

/** The schema the header line names: a file of another is no cache. */
export const SCHEMA = 'actors-listing-text-v3'
/** The machine's byte order, which the typed arrays in the file are in. */
export const ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1 ? 'LE' : 'BE'
/** Past this a cache is not read (the listing then reads every run.json and rewrites it). */
const MAX_CACHE_BYTES = 64 * 1024 * 1024
/** Numbers per key (exact keys: platform/file-key.ts), and bytes of `keys` and `fields` per entry. */
export const K = EXACT_KEY_LENGTH
export const KEY_BYTES = K * 8
export const FIELD_BYTES = 20
/** The reused buffer the body is copied through (the header line must fit in it too). */
export const WINDOW_BYTES = 64 * 1024
/** The bytes a separator is checked and rewritten with: NUL, newline, comma. */
export const NUL = 0
export const NEWLINE = 10
export const COMMA = 44
/** Between two Runs' texts in the document (jsonAtDepth's own separator at depth 1). */
export const SEPARATOR = Buffer.from(',\n')

/** A Run's printed text read from its state dir (a cache miss), with what orders it in the listing. */
export interface FreshText {
  created: string
  /** Run id: the listing's second sort key. */
  run: string
  text: Buffer
  /** Whether the cache may keep it (a finished Run, see listing-text-cache.ts), under the key its run.json had before it was read. */
  cacheable: boolean
}

/** Read Run dir `id` (`keyed`: its run.json is a regular file); undefined: no Run to list there. */
export type ReadFresh = (id: string, keyed: boolean) => FreshText | undefined

/** The cache file of state root `home`. */
export function listingTextFile(home: string): string {
  return join(historyCacheDir(home), 'listing-text')
}

/** An open cache file, checked up to its body (which is checked as it is read): its sections (listing-text-cache.ts). */
export interface Cache {
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
export function openCache(file: string, base: string, window: Buffer): Cache | undefined {
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
export function namesOf(cache: Cache): Buffer | undefined {
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
export function readFully(fd: number, into: Uint8Array, at: number, length: number, position: number): number {
  let done = 0
  while (done < length) {
    const n = readSync(fd, into, at + done, length - done, position + done)
    if (n === 0) break
    done += n
  }
  return done
}
