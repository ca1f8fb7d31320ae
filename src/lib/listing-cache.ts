/**
 * A cache of the listing summaries of terminal Runs, so that `inspect` over
 * thousands of finished Runs reads one file and stats each run.json instead
 * of opening and parsing every one (measured: about half the cost of a
 * 2,000-Run listing).
 *
 * Why it is safe: a terminal Run's summary depends only on its run.json, and
 * run.json is only ever replaced by rename (state-files.ts), so a cached entry
 * is valid exactly while run.json keeps the inode, size and times it had when
 * the entry was made. Live Runs are never cached (they are reconciled on every
 * read). The cache is disposable: a missing, damaged, foreign or oversized
 * file is ignored and rebuilt, and it is written without fsync.
 */
import {mkdirSync, statSync, type Stats} from 'node:fs'
import {join} from 'node:path'
import {historyCacheDir} from './home.js'
import {isTerminal} from './run-types.js'
import type {RunSummary} from './run-summary.js'
import {readJsonFile, writeFileAtomic} from './state-files.js'

const CACHE_SCHEMA = 'actors-listing-cache-v1'
/** Under runs/.cache/ (home.ts): it grows with the history it caches. */
const CACHE_FILE = 'listing.json'
/** Past this the cache costs more to parse than it saves; listings then read every run.json. */
const MAX_CACHE_BYTES = 64 * 1024 * 1024

interface Entry {
  /** inode, size, mtime and ctime (ms) of run.json when the summary was made. */
  key: string
  summary: RunSummary
}

interface CacheFile {
  schema: string
  entries: Record<string, Entry>
}

export class ListingCache {
  private readonly file: string
  private readonly previous: Record<string, Entry>
  private readonly next: Record<string, Entry> = Object.create(null)
  private readonly keys = new Map<string, string>()
  private changed = false

  constructor(private readonly home: string) {
    this.file = join(historyCacheDir(home), CACHE_FILE)
    this.previous = readEntries(this.file)
  }

  /** The cached summary of the Run `id` when its run.json is unchanged since; stats run.json either way. */
  lookup(id: string, dir: string, metaFile: string): RunSummary | undefined {
    let stat: Stats | undefined
    try {
      stat = statSync(metaFile, {throwIfNoEntry: false})
    } catch {
      stat = undefined
    }
    if (!stat?.isFile()) return undefined
    const key = `${stat.ino}:${stat.size}:${stat.mtimeMs}:${stat.ctimeMs}`
    this.keys.set(id, key)
    const entry = this.previous[id]
    // A damaged or hand-edited entry is a miss, never a wrong row.
    const summary = entry?.summary
    if (entry?.key !== key || summary?.run !== id || summary.state_dir !== dir || typeof summary.status !== 'string' || !isTerminal(summary.status)) return undefined
    this.next[id] = entry
    return summary
  }

  /** Keep a summary just read from run.json (terminal Runs only), keyed by the stat taken in lookup(). */
  remember(id: string, summary: RunSummary): void {
    const key = this.keys.get(id)
    if (key === undefined || !isTerminal(summary.status)) return
    this.next[id] = {key, summary}
    this.changed = true
  }

  /** Write the cache when it gained entries or lost some (pruned Runs). Best effort: it is only a cache. */
  save(): void {
    if (!this.changed && Object.keys(this.previous).length === Object.keys(this.next).length) return
    try {
      mkdirSync(historyCacheDir(this.home), {recursive: true})
      writeFileAtomic(this.file, JSON.stringify({schema: CACHE_SCHEMA, entries: this.next} satisfies CacheFile), {durable: false})
    } catch {}
  }
}

function readEntries(file: string): Record<string, Entry> {
  try {
    const cache = readJsonFile<CacheFile>(file, {schema: CACHE_SCHEMA, maxBytes: MAX_CACHE_BYTES})
    const entries = cache?.entries
    if (entries && typeof entries === 'object' && !Array.isArray(entries)) return Object.assign(Object.create(null), entries)
  } catch {}
  return Object.create(null)
}
