/**
 * Usage of individual processes from /proc, for a tracked unit (which has no
 * cgroup counters): CPU time of a process and of the children it reaped, its
 * resident memory now and at its peak.
 */
import {readFileSync} from 'node:fs'
import {TICKS_PER_SECOND} from '../../base/platform/process-identity.js'

export interface ProcUsage {
  cpu_seconds: number
  rss_bytes: number
  peak_rss_bytes: number
}

/** Usage of `pid` (its own CPU plus its reaped children's); undefined once it is gone. */
export function readProcUsage(pid: number | 'self'): ProcUsage | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    // fields[0] is field 3; utime, stime, cutime, cstime are fields 14-17.
    const ticks = Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14])
    const status = readFileSync(`/proc/${pid}/status`, 'utf8')
    const kib = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? 0) * 1024
    return {cpu_seconds: ticks / TICKS_PER_SECOND, rss_bytes: kib('VmRSS'), peak_rss_bytes: kib('VmHWM')}
  } catch {
    return undefined
  }
}
