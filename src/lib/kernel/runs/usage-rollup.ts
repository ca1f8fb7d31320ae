/**
 * Token usage summed over a Run tree. A Run that never reported usage makes
 * the total unknown: we report what was reported as a lower bound, never as a
 * smaller complete number.
 */
import {readUsage} from './usage.js'
import {collectDescendants} from './children.js'
import type {RunMeta} from '../../base/records/run.js'

export interface TreeUsage {
  /** The tree's total, or null ("unknown") when any Run in it has not reported usage. */
  tokens: number | null
  /** Sum of what was reported: the total when complete, a lower bound otherwise. */
  reported_tokens: number
  runs: number
  unreported_runs: number
}

/** Usage of one Run, or null when it has no usage.json (damaged counts as unreported). */
export function runTokens(dir: string): number | null {
  try {
    const usage = readUsage(dir)
    return usage && Number.isFinite(usage.tokens) ? usage.tokens : null
  } catch {
    return null
  }
}

/** Combine per-Run usage (null = unreported) into a tree total. */
export function combineUsage(values: Array<number | null>): TreeUsage {
  let reported = 0
  let unreported = 0
  for (const value of values) {
    if (value === null) unreported++
    else reported += value
  }
  return {
    tokens: unreported > 0 ? null : reported,
    reported_tokens: reported,
    runs: values.length,
    unreported_runs: unreported,
  }
}

/** Usage of the whole tree rooted at `dir` (walks children journals, not the state root). */
export function treeUsage(home: string, dir: string, meta: Pick<RunMeta, 'run_instance_id'>): TreeUsage {
  const dirs = [dir, ...collectDescendants(home, dir, meta).map((d) => d.dir)]
  return combineUsage(dirs.map(runTokens))
}

/** Human form: "1200 tokens", or "unknown (1200 reported, 2 Runs unreported)". */
export function formatTreeUsage(usage: TreeUsage): string {
  if (usage.tokens !== null) return `${usage.tokens} tokens`
  return `unknown (${usage.reported_tokens} reported, ${usage.unreported_runs} Run${usage.unreported_runs === 1 ? '' : 's'} unreported)`
}
