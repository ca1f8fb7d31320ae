/**
 * Caches of what a finished Run's run.json says, so that reading thousands of
 * finished Runs stats each run.json instead of opening and parsing it
 * (measured: about half the cost of a 2,000-Run listing). Two users: the
 * `inspect` listing (summaries of every finished Run, `runs/.cache/`) and the
 * run index (the fields `wait` needs of finished, unreported Runs).
 *
 * Why it is safe: a terminal Run's run.json is only ever replaced by rename
 * (state-files.ts), so a cached entry is valid exactly while run.json keeps
 * the inode, size and times it had when the entry was made (a hand edit in
 * place changes its times). Live Runs are never cached (they are reconciled
 * on every read). A cache is disposable: a missing, damaged, foreign or
 * oversized file is ignored and rebuilt, an entry that fails its owner's
 * check is a miss, and it is written without fsync.
 *
 * Why one stat per Run, not one per directory: an edit in place (an editor
 * that writes over the file, `sed -i` aside, or a test's writeFileSync)
 * changes run.json's own times but not its directory's nor the runs/ dir's,
 * so no cheaper check notices it; a Run dir's mtime would only catch
 * replacements by rename. The stat is the whole price of a hit, so it is
 * kept small: the key is four numbers compared as numbers (formatting
 * floating-point times as text cost more than the stat itself), taken
 * without building a Stats object (platform/file-key.ts), and an unchanged
 * cache is never rebuilt in memory nor written back.
 */
import {makePrivateDir} from '../../base/platform/private-files.js'
import {dirname, join, sep} from 'node:path'
import {historyCacheDir, runsDir} from '../../base/platform/home.js'
import {isTerminal, TERMINAL_STATUSES} from '../../base/records/run.js'
import type {RunSummary} from '../runs/summary.js'
import {readJsonFile, writeFileAtomic} from '../../base/platform/state-files.js'
import {fileKey, type FileKey} from '../../base/platform/file-key.js'

/** Past this a cache costs more to parse than it saves; readers then read every run.json. */
const MAX_CACHE_BYTES = 64 * 1024 * 1024

/** inode, size, mtime and ctime (ms) of run.json when the value was made (platform/file-key.ts). */
export type Key = FileKey

interface Entry<T> {
  key: Key
  value: T
}

/** A cache file's entries by name, and back: how a cache lays its entries out in its file. */
interface Layout<Stored> {
  /** The entries of a parsed file that has the cache's schema (anything unusable: none). */
  read(data: Record<string, unknown>): Map<string, Stored>
  /** The file's fields besides `schema`. */
  write(entries: Map<string, Stored>): Record<string, unknown>
}

/** `entries: {name: stored}`: simple, for small caches (a JSON object of thousands of keys parses slowly). */
function keyedLayout<Stored>(): Layout<Stored> {
  return {
    read: (data) => {
      const entries = data.entries
      return entries && typeof entries === 'object' && !Array.isArray(entries)
        ? new Map(Object.entries(entries as Record<string, Stored>))
        : new Map()
    },
    write: (entries) => ({entries: Object.fromEntries(entries)}),
  }
}

const sameKey = (a: unknown, b: Key) =>
  Array.isArray(a) && a.length === 4 && a[0] === b[0] && a[1] === b[1] && a[2] === b[2] && a[3] === b[3]

/**
 * Entries by name, valid while a run.json is unchanged; `stored` is whatever
 * `encode` makes of an entry, laid out in the file by a Layout. Subclasses
 * pick a compact encoding and layout for big caches.
 */
abstract class StatKeyedCache<T, Stored> {
  private readonly previous: Map<string, Stored>
  /** Names whose previous entry was served (kept as they are when the file is rewritten). */
  private readonly hits: string[] = []
  private readonly added = new Map<string, Stored>()
  private readonly keys = new Map<string, Key>()

  constructor(
    private readonly file: string,
    private readonly schema: string,
    private readonly layout: Layout<Stored>,
  ) {
    this.previous = readEntries(file, schema, layout)
  }

  protected abstract decode(name: string, stored: Stored, key: Key): T | undefined
  protected abstract encode(key: Key, value: T): Stored

  /** The cached value for `name` when `metaFile` is unchanged since; stats `metaFile` either way. */
  lookup(name: string, metaFile: string): T | undefined {
    return this.lookupKey(name, fileKey(metaFile))
  }

  /** lookup() with the key taken by the caller (fileKey(); undefined: no regular run.json). */
  lookupKey(name: string, key: Key | undefined): T | undefined {
    if (!key) return undefined
    const stored = this.previous.get(name)
    const value = stored === undefined ? undefined : this.decode(name, stored, key)
    if (value === undefined) {
      this.keys.set(name, key)
      return undefined
    }
    this.hits.push(name)
    return value
  }

  /** Keep a value just read from run.json, keyed by the stat taken in lookup() (none: not kept). */
  remember(name: string, value: T): void {
    const key = this.keys.get(name)
    if (key !== undefined) this.added.set(name, this.encode(key, value))
  }

  /**
   * Write the cache when it gained entries, or when most of its entries were
   * not used (their Runs pruned or reported): a stale entry only costs its
   * parse, so shrinking the file is not worth a rewrite every time. Best
   * effort: it is only a cache.
   */
  save(): void {
    if (this.added.size === 0 && this.hits.length * 2 >= this.previous.size) return
    const entries = new Map<string, Stored>()
    for (const name of this.hits) entries.set(name, this.previous.get(name)!)
    for (const [name, stored] of this.added) entries.set(name, stored)
    try {
      makePrivateDir(dirname(this.file))
      writeFileAtomic(this.file, JSON.stringify({schema: this.schema, ...this.layout.write(entries)}), {durable: false})
    } catch {}
  }
}

function readEntries<Stored>(file: string, schema: string, layout: Layout<Stored>): Map<string, Stored> {
  try {
    const cache = readJsonFile(file, {schema, maxBytes: MAX_CACHE_BYTES})
    if (cache) return layout.read(cache)
  } catch {}
  return new Map()
}

/** Values derived from finished Runs' run.json, keyed by a name and valid while that run.json is unchanged. */
export class RunJsonCache<T> extends StatKeyedCache<T, Entry<T>> {
  /** `valid(name, value)` rejects an entry that is damaged or lies about its Run (a miss, never a wrong answer). */
  constructor(
    file: string,
    schema: string,
    private readonly valid: (name: string, value: T) => boolean,
  ) {
    super(file, schema, keyedLayout())
  }

  protected decode(name: string, stored: Entry<T>, key: Key): T | undefined {
    if (!stored || !sameKey(stored.key, key) || !stored.value || !this.valid(name, stored.value)) return undefined
    return stored.value
  }

  protected encode(key: Key, value: T): Entry<T> {
    return {key, value}
  }
}

/**
 * The summary fields a listing row stores, in order, after the Run id and
 * the four key numbers. `run` and `state_dir` are not stored: they follow
 * from the row's Run id (a Run whose run.json names another id, or another
 * state dir, is never cached), so an entry cannot lie about which Run it is.
 */
const ROW_FIELDS = [
  'run_instance_id',
  'recipe',
  'status',
  'owner',
  'parent',
  'root',
  'depth',
  'created_at',
  'started_at',
  'ended_at',
  'duration_ms',
  'exit_code',
  'pid',
  'notification',
  'generation',
  'executor',
  'job_id',
  'node',
  'command',
  'resources',
] as const satisfies ReadonlyArray<keyof RunSummary>
/** A row: the Run id, the four key numbers, then ROW_FIELDS. */
const ROW_LENGTH = 5 + ROW_FIELDS.length

const STATUS_AT = 5 + ROW_FIELDS.indexOf('status')
const INSTANCE_AT = 5 + ROW_FIELDS.indexOf('run_instance_id')
const CREATED_AT = 5 + ROW_FIELDS.indexOf('created_at')
const TERMINAL: ReadonlySet<unknown> = new Set(TERMINAL_STATUSES)

/**
 * `rows: [row, ...]`, each row starting with its Run id: a JSON array of
 * arrays parses about three times faster than an object with thousands of
 * keys (2,000 Runs: 7 ms against 20 ms), and that parse was most of a warm
 * listing's own cost.
 */
const rowsLayout: Layout<unknown[]> = {
  read: (data) => {
    const entries = new Map<string, unknown[]>()
    if (!Array.isArray(data.rows)) return entries
    for (const row of data.rows as unknown[]) {
      // Damaged rows are dropped here; a row that names the wrong Run fails its key check in decode().
      if (Array.isArray(row) && typeof row[0] === 'string') entries.set(row[0], row)
    }
    return entries
  },
  write: (entries) => ({rows: [...entries.values()]}),
}

/**
 * The `inspect` listing's cache: summaries of finished Runs by Run id
 * (runs/.cache/listing.json), each a flat row (Run id, key numbers, then
 * ROW_FIELDS): about half the bytes of named fields, in rowsLayout.
 */
export class ListingCache extends StatKeyedCache<RunSummary, unknown[]> {
  private readonly base: string

  constructor(home: string) {
    super(join(historyCacheDir(home), 'listing.json'), 'actors-listing-cache-v5', rowsLayout)
    this.base = runsDir(home) + sep
  }

  protected decode(id: string, row: unknown[], key: Key): RunSummary | undefined {
    if (
      !Array.isArray(row) ||
      row.length !== ROW_LENGTH ||
      row[1] !== key[0] ||
      row[2] !== key[1] ||
      row[3] !== key[2] ||
      row[4] !== key[3]
    )
      return undefined
    // The fields a listing filters and sorts on must have their types; a row that lies otherwise is a damaged cache file.
    if (!TERMINAL.has(row[STATUS_AT]) || typeof row[INSTANCE_AT] !== 'string' || typeof row[CREATED_AT] !== 'string')
      return undefined
    // One literal in summarizeRun()'s field order, so cached and fresh rows print alike.
    const r = row as any[] // eslint-disable-line @typescript-eslint/no-explicit-any
    return {
      run: id,
      run_instance_id: r[5],
      recipe: r[6],
      status: r[7],
      owner: r[8],
      parent: r[9],
      root: r[10],
      depth: r[11],
      created_at: r[12],
      started_at: r[13],
      ended_at: r[14],
      duration_ms: r[15],
      exit_code: r[16],
      pid: r[17],
      notification: r[18],
      generation: r[19],
      state_dir: this.base + id,
      executor: r[20],
      job_id: r[21],
      node: r[22],
      command: r[23],
      resources: r[24],
    }
  }

  protected encode(key: Key, summary: RunSummary): unknown[] {
    return [summary.run, ...key, ...ROW_FIELDS.map((field) => summary[field] ?? null)]
  }

  /** Keep a summary just read: finished Runs whose run.json names this id and state dir only. */
  override remember(id: string, summary: RunSummary): void {
    if (isListingCacheable(summary, id, this.base)) super.remember(id, summary)
  }
}

/** Whether a listing cache may keep `summary` of Run dir `base + id`: a finished Run whose run.json names that id and state dir. */
export function isListingCacheable(summary: RunSummary, id: string, base: string): boolean {
  return (
    isTerminal(summary.status) &&
    summary.run === id &&
    summary.state_dir === base + id &&
    summary.waiting_for === undefined
  )
}
