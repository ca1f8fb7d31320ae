/**
 * Tree limits checked before a Run is created (SPEC: Trees, owners and
 * limits): the depth cap and the root's token budget. Both refuse with exit 5
 * and say what the limit is, so a coordinator can tell "refused" from "failed".
 */
import {refusedError, usageError} from '../../base/platform/errors.js'
import {runDir} from '../../base/platform/home.js'
import {readRunMetaById} from './store.js'
import type {RunMeta} from '../../base/records/run.js'
import {runTokens, treeUsage, type TreeUsage} from './usage-rollup.js'

export const DEFAULT_MAX_DEPTH = 8

/** The depth limit from ACTORS_MAX_DEPTH (default 8); a malformed value is a usage error, not a silent default. */
export function maxDepth(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.ACTORS_MAX_DEPTH
  if (raw === undefined || raw === '') return DEFAULT_MAX_DEPTH
  if (!/^\d+$/.test(raw.trim()) || Number(raw) > 1000) {
    throw usageError(
      `ACTORS_MAX_DEPTH: "${raw}" is not a whole number of levels`,
      'set it to a number such as 8, or unset it for the default',
    )
  }
  return Number(raw)
}

/** Refuse a launch at `depth` (a top-level Run is 0) when it is deeper than the limit (by default ACTORS_MAX_DEPTH's). */
export function checkDepth(depth: number, env: NodeJS.ProcessEnv = process.env, limit: number = maxDepth(env)): void {
  if (depth > limit) {
    throw refusedError(
      `depth ${depth} is over the limit of ${limit} (ACTORS_MAX_DEPTH, at most what the tree's root and ancestors were launched with)`,
      'do the work in this Run instead of launching a deeper one, or start the root with a larger ACTORS_MAX_DEPTH',
      {depth, max_depth: limit},
    )
  }
}

export interface BudgetState {
  root: string
  budget_tokens: number
  usage: TreeUsage
}

/** The budget of the tree rooted at `root` and what it has spent, or undefined when it has no budget. */
export function readTreeBudget(home: string, root: string, rootMeta?: RunMeta): BudgetState | undefined {
  let meta = rootMeta
  if (!meta) {
    try {
      meta = readRunMetaById(home, root)
    } catch {
      return undefined
    }
  }
  if (!meta || typeof meta.budget_tokens !== 'number') return undefined
  return {root, budget_tokens: meta.budget_tokens, usage: treeUsage(home, runDir(home, root), meta)}
}

/**
 * Refuse a launch in a tree that has spent its budget. What was reported is a
 * lower bound of what was spent, so "reported >= budget" is certain; an
 * incomplete total below the budget lets the launch through.
 */
export function checkBudget(home: string, root: string): void {
  const budget = readTreeBudget(home, root)
  if (!budget) return
  const spent = budget.usage.reported_tokens
  if (spent >= budget.budget_tokens) {
    throw refusedError(
      `tree ${root} has spent ${spent} of ${budget.budget_tokens} tokens (--budget-tokens)`,
      'finish with what the tree has, or start a new root Run with a larger --budget-tokens',
      {root, spent_tokens: spent, budget_tokens: budget.budget_tokens},
    )
  }
}

/**
 * The mark a Run's result gets when its own usage tipped its tree over the
 * budget: the tree is over budget at its end and would not be without it.
 * Never throws (called by the supervisor while writing the result).
 */
export function budgetMark(home: string, meta: RunMeta): Record<string, unknown> {
  try {
    const budget = readTreeBudget(home, meta.root, meta.run === meta.root ? meta : undefined)
    if (!budget) return {}
    const own = runTokens(runDir(home, meta.run)) ?? 0
    const spent = budget.usage.reported_tokens
    if (own > 0 && spent >= budget.budget_tokens && spent - own < budget.budget_tokens) {
      return {
        budget_exceeded: true,
        budget: {root: budget.root, spent_tokens: spent, budget_tokens: budget.budget_tokens},
      }
    }
  } catch {}
  return {}
}
