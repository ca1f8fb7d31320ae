/**
 * Caches of what a finished Run's run.json says, so that reading thousands of
 * finished Runs stats each run.json instead of opening and parsing it
 * (measured: about half the cost of a 2,000-Run listing). Two users: the
 * `inspect` listing (summaries of every finished Run, `runs/.cache/`) and the
 * run index (the fields `wait` needs of finished, unreported Runs).
 *
 * Why it is safe: a terminal Run's run.json is only ever replaced by rename
 * (state-files.ts), so a cached entry is valid exactly while run.json keeps
 * the inode, size and times it had when the entry was made. Live Runs are
 * never cached (they are reconciled on every read). A cache is disposable: a
 * missing, damaged, foreign or oversized file is ignored and rebuilt, an
 * entry that fails its owner's check is a miss, and it is written without
 * fsync.
 */
import {mkdirSync, statSync, type Stats} from 'node:fs'
import {dirname, join, sep} from 'node:path'
import {historyCacheDir, runsDir} from './home.js'
import {isTerminal} from './run-types.js'
import type {RunSummary} from './run-summary.js'
import {readJsonFile, writeFileAtomic} from './state-files.js'

/** Past this a cache costs more to parse than it saves; readers then read every run.json. */
const MAX_CACHE_BYTES = 64 * 1024 * 1024

interface Entry<T> {
  /** inode, size, mtime and ctime (ms) of run.json when the value was made. */
  key: string
  value: T
}

interface CacheFile<T> {
  schema: string
  entries: Record<string, Entry<T>>
}

/** Values derived from finished Runs' run.json, keyed by a name and valid while that run.json is unchanged. */
export class RunJsonCache<T> {
  private readonly previous: Record<string, Entry<T>>
  private readonly next: Record<string, Entry<T>> = Object.create(null)
  private readonly keys = new Map<string, string>()
  private changed = false

  /** `valid(name, value)` rejects an entry that is damaged or lies about its Run (a miss, never a wrong answer). */
  constructor(
    private readonly file: string,
    private readonly schema: string,
    private readonly valid: (name: string, value: T) => boolean,
  ) {
    this.previous = readEntries<T>(file, schema)
  }

  /** The cached value for `name` when `metaFile` is unchanged since; stats `metaFile` either way. */
  lookup(name: string, metaFile: string): T | undefined {
    let stat: Stats | undefined
    try {
      stat = statSync(metaFile, {throwIfNoEntry: false})
    } catch {
      stat = undefined
    }
    if (!stat?.isFile()) return undefined
    const key = `${stat.ino}:${stat.size}:${stat.mtimeMs}:${stat.ctimeMs}`
    this.keys.set(name, key)
    const entry = this.previous[name]
    if (entry?.key !== key || !entry.value || !this.valid(name, entry.value)) return undefined
    this.next[name] = entry
    return entry.value
  }

  /** Keep a value just read from run.json, keyed by the stat taken in lookup(). */
  remember(name: string, value: T): void {
    const key = this.keys.get(name)
    if (key === undefined) return
    this.next[name] = {key, value}
    this.changed = true
  }

  /**
   * Write the cache when it gained entries, or when most of its entries were
   * not used (their Runs pruned or reported): a stale entry only costs its
   * parse, so shrinking the file is not worth a rewrite every time. Best
   * effort: it is only a cache.
   */
  save(): void {
    if (!this.changed && Object.keys(this.next).length * 2 >= Object.keys(this.previous).length) return
    try {
      mkdirSync(dirname(this.file), {recursive: true})
      writeFileAtomic(this.file, JSON.stringify({schema: this.schema, entries: this.next} satisfies CacheFile<T>), {durable: false})
    } catch {}
  }
}

function readEntries<T>(file: string, schema: string): Record<string, Entry<T>> {
  try {
    const cache = readJsonFile<CacheFile<T>>(file, {schema, maxBytes: MAX_CACHE_BYTES})
    const entries = cache?.entries
    if (entries && typeof entries === 'object' && !Array.isArray(entries)) return Object.assign(Object.create(null), entries)
  } catch {}
  return Object.create(null)
}

/** The `inspect` listing's cache: summaries of finished Runs by Run id (runs/.cache/listing.json). */
export class ListingCache extends RunJsonCache<RunSummary> {
  constructor(home: string) {
    const base = runsDir(home)
    super(join(historyCacheDir(home), 'listing.json'), 'actors-listing-cache-v2', (id, summary) => {
      return summary.run === id && summary.state_dir === base + sep + id && typeof summary.status === 'string' && isTerminal(summary.status)
    })
  }

  /** Keep a summary just read (finished Runs only). */
  override remember(id: string, summary: RunSummary): void {
    if (isTerminal(summary.status)) super.remember(id, summary)
  }
}
