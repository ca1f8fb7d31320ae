/** The EXIT-to-MEM cells of the Runs table: start time, CPU and memory (SPEC "Commands", Conventions: live Runs now, finished ones their peak). */
import type {RunResources} from '../../kernel/runs/summary.js'

/** `[cpu, memory]` as shown: `0.4s`, `2m05s`; `512K`, `12.3M`, `1.2G`; '-' for each when not recorded. */
export function resourceCells(resources: RunResources | null | undefined): [string, string] {
  if (!resources) return ['-', '-']
  // A live Run shows its memory now, a finished one its peak.
  return [cpuText(resources.cpu_seconds), bytesText(resources.memory_bytes ?? resources.peak_memory_bytes)]
}

function cpuText(seconds: number | null): string {
  if (seconds === null) return '-'
  if (seconds < 60) return `${seconds < 10 ? seconds.toFixed(1) : Math.round(seconds)}s`
  const minutes = Math.floor(seconds / 60)
  return minutes < 60
    ? `${minutes}m${String(Math.round(seconds % 60)).padStart(2, '0')}s`
    : `${Math.floor(minutes / 60)}h${String(minutes % 60).padStart(2, '0')}m`
}

function bytesText(bytes: number | null | undefined): string {
  if (bytes === null || bytes === undefined) return '-'
  const units = ['B', 'K', 'M', 'G', 'T']
  let value = bytes
  let unit = 0
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024
    unit++
  }
  return unit === 0 ? `${value}B` : `${value < 10 ? value.toFixed(1) : Math.round(value)}${units[unit]}`
}

/** A start time in a table cell (UTC, as stored): `HH:MM:SS` on the day of `now`, `MM-DD HH:MM` the same year, else the date. */
export function compactTime(iso: string | null, now: number): string {
  if (!iso) return '-'
  const today = new Date(now).toISOString()
  if (iso.slice(0, 10) === today.slice(0, 10)) return iso.slice(11, 19)
  if (iso.slice(0, 4) === today.slice(0, 4)) return `${iso.slice(5, 10)} ${iso.slice(11, 16)}`
  return iso.slice(0, 10)
}
