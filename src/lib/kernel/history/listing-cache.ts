/**
 * The `inspect` listing's cache of what a finished Run's run.json says
 * (`runs/.cache/`), so that listing thousands of finished Runs stats each
 * run.json instead of opening and parsing it (measured: about half the cost
 * of a 2,000-Run listing).
 *
 * Why it is safe: a terminal Run's run.json is only ever replaced by rename
 * (state-files.ts), so a cached entry is valid exactly while run.json keeps
 * the inode, size and times it had when the entry was made (a hand edit in
 * place changes its times). Live Runs are never cached (they are reconciled
 * on every read). A cache is disposable: a missing, damaged, foreign or
 * oversized file is ignored and rebuilt, an entry that fails its check is a
 * miss, and it is written without fsync.
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
import type {FileKey} from '../../base/platform/file-key.js'

/** Past this a cache costs more to parse than it saves; readers then read every run.json. */
const MAX_CACHE_BYTES = 64 * 1024 * 1024
const SCHEMA = 'actors-listing-cache-v5'

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
 * The file's rows by Run id. It holds `rows: [row, ...]`, each row starting
 * with its Run id: a JSON array of arrays parses about three times faster
 * than an object with thousands of keys (2,000 Runs: 7 ms against 20 ms), and
 * that parse was most of a warm listing's own cost. A missing, damaged,
 * foreign or oversized file has none.
 */
function readRows(file: string): Map<string, unknown[]> {
  const entries = new Map<string, unknown[]>()
  try {
    const cache = readJsonFile(file, {schema: SCHEMA, maxBytes: MAX_CACHE_BYTES})
    if (!cache || !Array.isArray(cache.rows)) return entries
    for (const row of cache.rows as unknown[]) {
      // Damaged rows are dropped here; a row that names the wrong Run fails its key check in decode().
      if (Array.isArray(row) && typeof row[0] === 'string') entries.set(row[0], row)
    }
  } catch {}
  return entries
}

/**
 * The `inspect` listing's cache: summaries of finished Runs by Run id
 * (runs/.cache/listing.json), each a flat row (Run id, key numbers, then
 * ROW_FIELDS): about half the bytes of named fields, in rowsLayout.
 */
export class ListingCache {
  private readonly base: string
  private readonly file: string
  private readonly previous: Map<string, unknown[]>
  /** Run ids whose previous row was served (kept as they are when the file is rewritten). */
  private readonly hits: string[] = []
  private readonly added = new Map<string, unknown[]>()
  private readonly keys = new Map<string, FileKey>()

  constructor(home: string) {
    this.file = join(historyCacheDir(home), 'listing.json')
    this.base = runsDir(home) + sep
    this.previous = readRows(this.file)
  }

  /** The cached summary of Run `id` when its run.json's key (fileKey(); undefined: no regular run.json) is unchanged since. */
  lookupKey(id: string, key: FileKey | undefined): RunSummary | undefined {
    if (!key) return undefined
    const row = this.previous.get(id)
    const summary = row === undefined ? undefined : this.decode(id, row, key)
    if (summary === undefined) {
      this.keys.set(id, key)
      return undefined
    }
    this.hits.push(id)
    return summary
  }

  /**
   * Keep a summary just read from run.json, keyed by the stat taken in
   * lookupKey() (none: not kept): finished Runs whose run.json names this id
   * and state dir only.
   */
  remember(id: string, summary: RunSummary): void {
    const key = this.keys.get(id)
    if (key !== undefined && isListingCacheable(summary, id, this.base))
      this.added.set(id, [summary.run, ...key, ...ROW_FIELDS.map((field) => summary[field] ?? null)])
  }

  /**
   * Write the cache when it gained rows, or when most of its rows were not
   * used (their Runs pruned or reported): a stale row only costs its parse,
   * so shrinking the file is not worth a rewrite every time. Best effort: it
   * is only a cache.
   */
  save(): void {
    if (this.added.size === 0 && this.hits.length * 2 >= this.previous.size) return
    const rows = new Map<string, unknown[]>()
    for (const id of this.hits) rows.set(id, this.previous.get(id)!)
    for (const [id, row] of this.added) rows.set(id, row)
    try {
      makePrivateDir(dirname(this.file))
      writeFileAtomic(this.file, JSON.stringify({schema: SCHEMA, rows: [...rows.values()]}), {durable: false})
    } catch {}
  }

  private decode(id: string, row: unknown[], key: FileKey): RunSummary | undefined {
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
