/**
 * Token usage reported by a Run (`actors emit usage`). Each report is a Trace
 * event and is added to the Run's `usage.json` totals under its lock, so tree
 * budgets can sum usage without replaying every Trace.
 */
import {join} from 'node:path'
import {corruptStateError} from '../../base/platform/errors.js'
import {withLockSync} from '../../base/platform/file-lock.js'
import {runFile} from './store.js'
import {readJsonFile, writeJsonAtomic} from '../../base/platform/state-files.js'

export interface UsageTotals {
  tokens: number
  prompt_tokens: number
  completion_tokens: number
  reports: number
  updated_at: string
}

export function usageFile(dir: string): string {
  return runFile(dir, 'usage')
}

/** The Run's usage totals, or undefined when it never reported any. */
export function readUsage(dir: string): UsageTotals | undefined {
  const usage = readJsonFile<UsageTotals>(usageFile(dir), {oftenMissing: true})
  if (!usage) return undefined
  for (const field of ['tokens', 'prompt_tokens', 'completion_tokens', 'reports'] as const) {
    const value = usage[field]
    // A string or NaN here would turn sums into concatenations and budgets into nonsense.
    if (!Number.isSafeInteger(value) || value < 0) {
      throw corruptStateError(
        usageFile(dir),
        `field "${field}" is ${JSON.stringify(value) ?? 'missing'}, not a non-negative integer`,
      )
    }
  }
  return usage
}

/** Add one usage report to the Run's totals. */
export function addUsage(
  dir: string,
  report: {tokens: number; prompt_tokens: number; completion_tokens: number},
): UsageTotals {
  return withLockSync(join(dir, '.usage.lock'), () => {
    const current = readUsage(dir) ?? {tokens: 0, prompt_tokens: 0, completion_tokens: 0, reports: 0, updated_at: ''}
    const next: UsageTotals = {
      tokens: current.tokens + report.tokens,
      prompt_tokens: current.prompt_tokens + report.prompt_tokens,
      completion_tokens: current.completion_tokens + report.completion_tokens,
      reports: current.reports + 1,
      updated_at: new Date().toISOString(),
    }
    writeJsonAtomic(usageFile(dir), next)
    return next
  })
}
