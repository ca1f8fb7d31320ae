/**
 * The cache behind a plain `inspect --json` (every Run, no filter): per
 * finished Run, the exact bytes its summary has inside the printed document,
 * so a warm listing is written from those bytes instead of building 2,000
 * summary objects, stringifying and encoding them again.
 *
 * Staleness works as in ./listing-cache.ts (read its header): an entry serves
 * while run.json keeps the key it had when the entry was made, one stat per
 * Run. Only finished Runs whose run.json names their own id and state dir are
 * kept, as there.
 *
 * Layout of runs/.cache/listing-text, chosen so that no entry needs JSON
 * escaping or parsing: one compact JSON line
 *   {"schema":"actors-listing-text-v1","base":"<runs dir>/","entries":[[id, k0, k1, k2, k3, created_at, bytes], ...]}
 * then, for each entry in that order, its `bytes` bytes followed by a NUL and
 * a newline (JSON text never holds a raw NUL: inside strings it is escaped).
 * Entries are written in listing order and the separator is as long as the
 * `,\n` between Runs in the document, so a warm listing writes runs of
 * entries as one piece, their NULs turned into commas. Reading
 * checks the schema, the base (a state root moved elsewhere prints other
 * state dirs), each entry's fields, that every NUL lies exactly where the
 * lengths say and nowhere else, and that the file ends there: anything else
 * is an empty cache, rebuilt by the listing. Never a wrong listing.
 */
import {mkdirSync} from 'node:fs'
import {dirname, join} from 'node:path'
import {historyCacheDir} from '../platform/home.js'
import {readBoundedBytes, writeFileAtomic} from '../platform/state-files.js'
import type {FileKey} from '../platform/file-key.js'

const SCHEMA = 'actors-listing-text-v1'
/** Past this a cache is not read (the listing then reads every run.json and rewrites it). */
const MAX_CACHE_BYTES = 64 * 1024 * 1024
const NUL = 0
const NEWLINE = 10
/** What follows each entry: NUL, newline. Two bytes, as the `,\n` between Runs in the document (see printedDocument). */
export const SEPARATOR = 2

/** A header entry: Run id, the four key numbers, created_at, the byte length of its text. */
type HeaderEntry = [string, number, number, number, number, string, number]

/** Where an entry's text lies: `bytes[start, end)`, and the created_at the listing sorts by. */
export interface PrintedEntry {
  created: string
  /** Run id: the listing's second sort key. */
  run: string
  bytes: Buffer
  start: number
  end: number
}

interface Stored {
  header: HeaderEntry
  start: number
}

/** The printed text of finished Runs' summaries by Run id, valid while their run.json is unchanged (see above). */
export class ListingTextCache {
  private readonly file: string
  private data: Buffer = Buffer.alloc(0)
  private readonly previous = new Map<string, Stored>()
  /** The entries the next file may hold (hits and remembered ones), with their header entries. */
  private readonly kept = new Map<PrintedEntry, HeaderEntry>()
  private added = 0

  /** `base`: the runs dir with a trailing separator, as every cached state_dir starts. */
  constructor(
    home: string,
    private readonly base: string,
  ) {
    this.file = join(historyCacheDir(home), 'listing-text')
    try {
      this.read()
    } catch {
      this.previous.clear()
    }
  }

  private read(): void {
    const data = readBoundedBytes(this.file, MAX_CACHE_BYTES)
    if (!data) return
    const newline = data.indexOf(NEWLINE)
    if (newline < 0) return
    const head = JSON.parse(data.toString('utf8', 0, newline)) as {schema?: unknown; base?: unknown; entries?: unknown}
    if (head?.schema !== SCHEMA || head.base !== this.base || !Array.isArray(head.entries)) return
    let at = newline + 1
    for (const entry of head.entries as unknown[]) {
      if (!Array.isArray(entry) || entry.length !== 7 || typeof entry[0] !== 'string' || typeof entry[5] !== 'string') return this.previous.clear()
      const length = entry[6]
      if (!Number.isSafeInteger(length) || length < 0) return this.previous.clear()
      const end = at + length
      // The entry's NUL must be the first one from its start: a text holding a NUL, or lengths that lie, end here.
      if (data.indexOf(NUL, at) !== end || data[end + 1] !== NEWLINE) return this.previous.clear()
      this.previous.set(entry[0], {header: entry as HeaderEntry, start: at})
      at = end + SEPARATOR
    }
    if (at !== data.length) return this.previous.clear()
    this.data = data
  }

  /** The cached text of Run `id` when its run.json still has `key` (undefined: no regular run.json). */
  lookup(id: string, key: FileKey | undefined): PrintedEntry | undefined {
    const stored = key && this.previous.get(id)
    if (!stored) return undefined
    const h = stored.header
    if (h[1] !== key[0] || h[2] !== key[1] || h[3] !== key[2] || h[4] !== key[3]) return undefined
    const entry = {created: h[5], run: id, bytes: this.data, start: stored.start, end: stored.start + h[6]}
    this.kept.set(entry, h)
    return entry
  }

  /** Keep `entry`, the printed text of finished Run `id` just read, under the key taken before it was read. */
  remember(id: string, key: FileKey, entry: PrintedEntry): void {
    this.kept.set(entry, [id, key[0], key[1], key[2], key[3], entry.created, entry.end - entry.start])
    this.added++
  }

  /**
   * Write the cache when it gained entries or lost most of them (pruned or
   * relaunched Runs), in the order of `listing` (the kept entries among
   * them): the next listing then finds its entries back to back. Best
   * effort, without fsync: it is only a cache.
   */
  save(listing: PrintedEntry[]): void {
    const hits = this.kept.size - this.added
    if (this.added === 0 && hits * 2 >= this.previous.size) return
    const entries = listing.filter((e) => this.kept.has(e))
    const head = Buffer.from(JSON.stringify({schema: SCHEMA, base: this.base, entries: entries.map((e) => this.kept.get(e))}) + '\n')
    const out = Buffer.allocUnsafe(head.length + entries.reduce((size, e) => size + e.end - e.start + SEPARATOR, 0))
    let at = head.copy(out, 0)
    for (const e of entries) {
      at += e.bytes.copy(out, at, e.start, e.end)
      out[at++] = NUL
      out[at++] = NEWLINE
    }
    try {
      mkdirSync(dirname(this.file), {recursive: true})
      writeFileAtomic(this.file, out, {durable: false})
    } catch {}
  }
}
