import {usageError} from './errors.js'

const UNITS: Record<string, number> = {ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000}

/**
 * Parse `500ms`, `30s`, `5m`, `1h`, `2d` or a bare number of seconds into
 * milliseconds. `what` names the flag or field in the error message.
 */
export function parseDuration(value: string | number, what: string): number {
  if (typeof value === 'number') {
    if (Number.isFinite(value) && value >= 0) return Math.round(value * 1000)
    throw usageError(`${what}: ${value} is not a duration`, 'use 500ms, 30s, 5m, 1h or a number of seconds')
  }
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)?$/.exec(value.trim())
  if (!match) {
    throw usageError(`${what}: "${value}" is not a duration`, 'use 500ms, 30s, 5m, 1h or a number of seconds')
  }
  const ms = Number(match[1]) * UNITS[match[2] ?? 's']
  if (!Number.isFinite(ms) || ms > 365 * 86_400_000) {
    throw usageError(`${what}: "${value}" is out of range`, 'use a duration below one year')
  }
  return Math.round(ms)
}

/**
 * A duration that must be above zero (`run --timeout`, `lock --lease`): zero
 * would mean a Run ended at once or a slot expired on arrival, never what
 * was meant, so it is refused rather than taken silently.
 */
export function parsePositiveDuration(value: string, what: string): number {
  const ms = parseDuration(value, what)
  if (ms > 0) return ms
  throw usageError(
    `${what}: "${value}" is zero`,
    `give a duration above zero (500ms, 30s, 5m, 1h), or leave ${what} out for none`,
  )
}

/** Human form of a duration for tables: 850ms, 12.3s, 4m05s, 2h10m. */
export function formatDuration(ms: number | undefined): string {
  if (ms === undefined || !Number.isFinite(ms) || ms < 0) return '-'
  if (ms < 1000) return `${Math.round(ms)}ms`
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)}s`
  if (ms < 3_600_000) {
    const m = Math.floor(ms / 60_000)
    const s = Math.floor((ms % 60_000) / 1000)
    return `${m}m${String(s).padStart(2, '0')}s`
  }
  const h = Math.floor(ms / 3_600_000)
  const m = Math.floor((ms % 3_600_000) / 60_000)
  return `${h}h${String(m).padStart(2, '0')}m`
}
