/**
 * Reading Runs for `actors inspect`: the table of all Runs and the detail of
 * one (meta, result, declared controls, artifacts, trace tail).
 */
import {compareText} from './compare.js'
import {usageError} from './errors.js'
import {runsDir} from './home.js'
import {sep} from 'node:path'
import {ListingCache} from './listing-cache.js'
import {listRunIds, readListedRun, runFile} from './run-store.js'
import {requireGeneration} from './generations/list.js'
import {summarizeRun, type RunSummary} from './run-summary.js'
import {readTraceTail, type TraceEvent} from './trace.js'
import {LIVE_STATUSES, TERMINAL_STATUSES, type RunMeta, type RunResult} from './run-types.js'

const ALL_STATUSES: readonly string[] = [...LIVE_STATUSES, ...TERMINAL_STATUSES]

/** Parse `--status running,failed`; unknown names are a usage error listing the valid ones. */
export function parseStatusFilter(value: string | undefined): Set<string> | undefined {
  if (!value) return undefined
  const wanted = value.split(',').map((s) => s.trim()).filter(Boolean)
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

/**
 * Every Run under the state root, oldest first, optionally filtered by status.
 * Finished Runs come from the listing cache while their run.json is unchanged.
 */
export function listRunSummaries(home: string, statuses?: Set<string>): RunListing {
  const runs: RunSummary[] = []
  const damaged: RunListing['damaged'] = []
  const now = Date.now()
  const cache = new ListingCache(home)
  const base = runsDir(home)
  for (const id of listRunIds(home)) {
    const dir = base + sep + id
    let summary = cache.lookup(id, dir, runFile(dir, 'meta'))
    if (!summary) {
      const state = readListedRun(dir, {withResult: false})
      if (!state) continue
      if (state.error) {
        damaged.push({state_dir: dir, error: state.error})
        continue
      }
      summary = summarizeRun(state, now)
      cache.remember(id, summary)
    }
    if (!statuses || statuses.has(summary.status)) runs.push(summary)
  }
  cache.save()
  runs.sort((a, b) => compareText(a.created_at, b.created_at) || compareText(a.run, b.run))
  return {runs, damaged}
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
  const state = requireGeneration(home, ref)
  return {
    ...summarizeRun(state),
    meta: state.meta,
    result: state.result ?? null,
    controls: state.meta.control ?? [],
    artifacts: state.result?.artifacts ?? [],
    trace: readTraceTail(state.dir, traceTail),
  }
}
