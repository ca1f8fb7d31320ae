/**
 * Reading Runs for `actors inspect`: the table of all Runs and the detail of
 * one (meta, result, declared controls, artifacts, trace tail).
 */
import {compareText} from '../../base/platform/compare.js'
import {usageError} from '../../base/platform/errors.js'
import {isPlainName, refuseLinkedRuns, resolveRunRef, runsDir} from '../../base/platform/home.js'
import {recentLaunches} from './launch-log.js'
import {addIndexMarker} from '../runs/index-entry.js'
import {readIndexedRuns} from './index-reader.js'
import {collectDescendants} from '../runs/children.js'
import {sep} from 'node:path'
import {isListingCacheable, ListingCache} from './listing-cache.js'
import {listingTexts, type ReadFresh} from './listing-text.js'
import {fileKey, type FileKey} from '../../base/platform/file-key.js'
import {listRunEntries, readListedRun, requireRun, RUN_FILES, type RunState} from '../runs/store.js'
import {requireGeneration} from '../runs/generation-list.js'
import {summarizeRun, type RunSummary} from '../runs/summary.js'
import {readTraceTail, type TraceEvent} from '../runs/trace.js'
import {LIVE_STATUSES, TERMINAL_STATUSES, type RunMeta, type RunResult} from '../../base/records/run.js'
import {hiddenRunError, hiddenRuns} from './hidden-runs.js'

const ALL_STATUSES: readonly string[] = [...LIVE_STATUSES, ...TERMINAL_STATUSES]

/** Parse `--status running,failed`; unknown names are a usage error listing the valid ones. */
export function parseStatusFilter(value: string | undefined): Set<string> | undefined {
  if (!value) return undefined
  const wanted = value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
  for (const status of wanted) {
    if (!ALL_STATUSES.includes(status)) {
      throw usageError(`--status: unknown status "${status}"`, `use one or more of ${ALL_STATUSES.join(', ')}`)
    }
  }
  return new Set(wanted)
}

export interface RunListing {
  runs: RunSummary[]
  /** Run dirs whose files could not be read, with the reason (fail closed, but keep listing). */
  damaged: Array<{state_dir: string; error: string}>
}

/** `inspect` filters and bounds (SPEC: Commands). */
export interface ListingFilter {
  statuses?: Set<string>
  /** The N most recent by start time, plus every live Run older than those. */
  limit?: number
  /** Created within this many ms. */
  sinceMs?: number
  recipe?: string
  owner?: string
  /** That Run (id or state dir) and its descendants. */
  root?: string
}

const LIVE: ReadonlySet<string> = new Set(LIVE_STATUSES)
/** Launch-log lines are written just before the Run's created_at: look this much past a --since cutoff. */
const LOG_SKEW_MS = 60_000

/**
 * The Runs under the state root that pass `filter`, oldest first. Each filter
 * reads from the cheapest source that holds every answer: a subtree from the
 * children journals (--root), live statuses from the run index, the most
 * recent ones from the end of the launch log (--limit, --since); only the
 * rest reads every state dir (finished Runs through the listing cache).
 */
export function listRunSummaries(home: string, filter: ListingFilter = {}): RunListing {
  // Before any source: the run index and the launch log name ids joined to runs/, the listing cache lives in it.
  refuseLinkedRuns(home)
  const now = Date.now()
  const keep = (s: RunSummary) =>
    (!filter.statuses || filter.statuses.has(s.status)) &&
    (filter.recipe === undefined || s.recipe === filter.recipe) &&
    (filter.owner === undefined || s.owner === filter.owner) &&
    (filter.sinceMs === undefined || Date.parse(s.created_at) >= now - filter.sinceMs)
  let listing: RunListing
  if (filter.root !== undefined) listing = subtreeListing(home, filter.root, now)
  else if (filter.statuses && [...filter.statuses].every((s) => LIVE.has(s))) listing = activeListing(home, now, true)
  else if (filter.limit !== undefined || filter.sinceMs !== undefined)
    listing = recentListing(home, filter, keep, now) ?? everyListing(home, now)
  else listing = everyListing(home, now)
  let runs = listing.runs.filter(keep)
  if (filter.limit !== undefined) runs = newestWithLive(runs, filter.limit)
  runs.sort((a, b) => compareText(a.created_at, b.created_at) || compareText(a.run, b.run))
  return {runs, damaged: listing.damaged}
}

/** The live and unreported Runs (what a wait's live view follows), from the run index. */
export function listActiveSummaries(home: string): RunListing {
  refuseLinkedRuns(home)
  return activeListing(home, Date.now(), false)
}

/** Start time used by --limit: when the Run started, else when it was created. */
const startTime = (s: RunSummary) => s.started_at ?? s.created_at

/** The `limit` most recent by start time, plus every live Run older than those (live Runs are never cut). */
function newestWithLive(runs: RunSummary[], limit: number): RunSummary[] {
  const newest = [...runs].sort((a, b) => compareText(startTime(b), startTime(a)) || compareText(b.run, a.run))
  return newest.filter((s, i) => i < limit || LIVE.has(s.status))
}

/** Live and unreported Runs, from the run index (`liveOnly`: the live ones). */
function activeListing(home: string, now: number, liveOnly: boolean): RunListing {
  const indexed = readIndexedRuns(home, {queued: liveOnly ? 'none' : 'all'})
  const runs = indexed.runs
    .filter((state) => !liveOnly || LIVE.has(state.meta.status))
    .map((state) => summarizeRun(state, now))
  return {runs, damaged: indexed.damaged}
}

/**
 * Every live Run, plus Runs from the end of the launch log until the filter
 * cannot match earlier ones (enough matches for --limit, launches older than
 * --since). Undefined when there is no launch log.
 */
function recentListing(
  home: string,
  filter: ListingFilter,
  keep: (s: RunSummary) => boolean,
  now: number,
): RunListing | undefined {
  const live = activeListing(home, now, true)
  const launches = recentLaunches(home)
  if (!launches) return undefined
  const byId = new Map(live.runs.map((s) => [s.run, s]))
  const damaged = [...live.damaged]
  // Named already (a live marker's dir found damaged): not read, nor named, twice.
  const named = new Set(damaged.map((d) => d.state_dir))
  const starts: string[] = []
  const base = runsDir(home)
  for (const line of launches) {
    if (filter.sinceMs !== undefined && Date.parse(line.at) < now - filter.sinceMs - LOG_SKEW_MS) break
    // A Run starts after it is launched: once `limit` matches started after this launch, earlier launches cannot beat them.
    if (
      filter.limit !== undefined &&
      starts.length >= filter.limit &&
      compareText(line.at, starts[filter.limit - 1]) < 0
    )
      break
    if (byId.has(line.id) || !isPlainName(line.id) || named.has(base + sep + line.id)) continue
    // The launch log names ids, not what is in their place: a link there is refused, never read through.
    const state = readListedRun(base + sep + line.id, {withResult: false, refuseLink: true})
    if (!state) continue
    if (state.error) {
      damaged.push({state_dir: state.dir, error: state.error})
      continue
    }
    const summary = summarizeRun(state, now)
    byId.set(line.id, summary)
    if (!keep(summary) || filter.limit === undefined) continue
    starts.push(startTime(summary))
    starts.sort((a, b) => compareText(b, a))
    if (starts.length > filter.limit) starts.length = filter.limit
  }
  return {runs: [...byId.values()], damaged}
}

/** One Run (id or state dir) and its descendants, through the children journals. */
function subtreeListing(home: string, ref: string, now: number): RunListing {
  const top = requireRun(home, resolveRunRef(home, ref))
  const states = [top, ...collectDescendants(home, top.dir, top.meta)]
  return {runs: states.map((state) => summarizeRun(state, now)), damaged: []}
}

/** The entries of runs/ that are no directory (a link, never followed), as damaged Run dirs. */
function strayDamage(strays: Array<{dir: string; error: string}>): RunListing['damaged'] {
  return strays.map((stray) => ({state_dir: stray.dir, error: stray.error}))
}

/**
 * Every Run dir's id and its run.json key (undefined: no regular run.json),
 * for everyListing(), and the entries of runs/ that are no Run dir. The keys
 * are all taken before the cache is parsed: their garbage is then collected
 * while little else is alive (a young-generation collection copies what is
 * alive, and a parsed cache is thousands of objects).
 */
function keyedRunIds(home: string): {
  base: string
  ids: string[]
  keys: Array<FileKey | undefined>
  damaged: RunListing['damaged']
} {
  const base = runsDir(home) + sep
  const {ids, strays} = listRunEntries(home)
  return {base, ids, keys: ids.map((id) => fileKey(base + id + sep + RUN_FILES.meta)), damaged: strayDamage(strays)}
}

/**
 * The summary of Run `id` read from its state dir (a cache miss), or
 * undefined: no Run there, or a damaged one (noted in `damaged`). A live Run
 * missing from the run index (a hand-edited run.json) is entered on the way.
 */
function readFreshSummary(
  home: string,
  base: string,
  id: string,
  now: number,
  damaged: RunListing['damaged'],
): RunSummary | undefined {
  const state = readListedRun(base + id, {withResult: false})
  if (!state) return undefined
  if (state.error) {
    damaged.push({state_dir: base + id, error: state.error})
    return undefined
  }
  const summary = summarizeRun(state, now)
  if (LIVE.has(summary.status)) addIndexMarker(home, summary.run, summary.run_instance_id)
  return summary
}

/** Every Run under the state root. Finished Runs come from the listing cache while their run.json is unchanged. */
function everyListing(home: string, now: number): RunListing {
  const runs: RunSummary[] = []
  const {base, ids, keys, damaged} = keyedRunIds(home)
  const cache = new ListingCache(home)
  for (let i = 0; i < ids.length; i++) {
    let summary = cache.lookupKey(ids[i], keys[i])
    if (!summary) {
      summary = readFreshSummary(home, base, ids[i], now, damaged)
      if (!summary) continue
      cache.remember(ids[i], summary)
    }
    runs.push(summary)
  }
  cache.save()
  return {runs, damaged: [...damaged, ...hiddenRuns(home)]}
}

/** Every Run as printed text (see printedListing), oldest first, and the damaged Run dirs. */
export interface PrintedListing {
  /**
   * The Runs' texts between the document's `[` and `]`, `,\n` between them,
   * in pieces to print in order; a piece is valid only until the next is
   * taken (see ./listing-text.ts listingTexts).
   */
  texts: Iterable<Uint8Array>
  /** The Run dirs whose files could not be read: complete once `texts` was read through. */
  damaged: RunListing['damaged']
}

/**
 * What everyListing() reads, with each Run's summary as `print` makes it
 * (its text inside the printed document) instead of an object: finished Runs
 * come as cached bytes while their run.json is unchanged
 * (./listing-text.ts), so a warm `inspect --json` builds no summaries.
 * Same Runs, same order (created_at, then Run id) as listRunSummaries(home).
 */
export function printedListing(home: string, print: (summary: RunSummary) => string): PrintedListing {
  const base = runsDir(home) + sep
  const now = Date.now()
  const {ids, strays} = listRunEntries(home)
  const damaged = strayDamage(strays)
  const readFresh: ReadFresh = (id, keyed) => {
    const summary = readFreshSummary(home, base, id, now, damaged)
    if (!summary) return undefined
    return {
      created: summary.created_at,
      run: summary.run,
      text: Buffer.from(print(summary)),
      cacheable: keyed && isListingCacheable(summary, id, base),
    }
  }
  damaged.push(...hiddenRuns(home))
  return {texts: listingTexts(home, base, ids, readFresh), damaged}
}

export interface RunDetail extends RunSummary {
  meta: RunMeta
  result: RunResult | null
  controls: string[]
  artifacts: RunResult['artifacts']
  trace: TraceEvent[]
}

/** Everything about one Run (id or state dir; `RUN@N` for its generation N). */
export function inspectRun(home: string, ref: string, traceTail = 20): RunDetail {
  let state: RunState
  try {
    state = requireGeneration(home, ref)
  } catch (error) {
    throw hiddenRunError(home, ref, error)
  }
  return {
    ...summarizeRun(state),
    meta: state.meta,
    result: state.result ?? null,
    // run.json is the Run's to write: only names are actions (objects there printed as "[object Object]").
    controls: Array.isArray(state.meta.control) ? state.meta.control.filter((c) => typeof c === 'string') : [],
    artifacts: state.result?.artifacts ?? [],
    trace: readTraceTail(state.dir, traceTail),
  }
}
