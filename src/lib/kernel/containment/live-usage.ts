/**
 * Current CPU and memory of a live Run for listings and status (SPEC:
 * Containment, usage), cheap enough to read for every live Run: a cgroup's
 * counters, or, tracked, the recorded command processes alone (no scan of
 * the process table per Run).
 */
import {isSameProcess} from '../../base/platform/process-identity.js'
import type {ChildProcessRecord, RunMeta} from '../../base/records/run.js'
import {supervisorArgs} from '../../base/records/supervisor-args.js'
import {isCgroupDir, unifiedCgroupDirOf} from './cgroup-fs.js'
import {CgroupUnit} from './cgroup-unit.js'
import {readProcUsage} from './proc-usage.js'
import {isContainmentRecord, type UnitUsage} from './unit.js'

/** Usage of a live Run now, or undefined when nothing of it can be read. */
export function liveRunUsage(meta: RunMeta): UnitUsage | undefined {
  const record = meta.containment
  if (isContainmentRecord(record) && record.kind === 'cgroup')
    return isCgroupDir(record.path) ? new CgroupUnit(record).usage() : undefined
  const records: ChildProcessRecord[] = Array.isArray(meta.children_processes) ? meta.children_processes : []
  let cpu = 0
  let rss = 0
  let peak = 0
  let seen = false
  for (const r of records) {
    if (!r?.identity || !isSameProcess({...r.identity, pid: r.pid})) continue
    const usage = readProcUsage(r.pid)
    if (!usage) continue
    seen = true
    cpu += usage.cpu_seconds
    rss += usage.rss_bytes
    peak = Math.max(peak, usage.peak_rss_bytes)
  }
  return seen
    ? {cpu_seconds: Math.round(cpu * 1000) / 1000, memory_bytes: rss, peak_memory_bytes: Math.max(peak, rss)}
    : undefined
}

/**
 * Whether a Run recorded as running is frozen all the same: its cgroup frozen
 * by an ancestor's freeze (a paused parent Run: a child's cgroup sits below
 * its parent's) or by its own command. A Run with no unit of its own yet is
 * frozen when its supervisor is: a Run launched from inside a parent's cgroup
 * has its supervisor there, and the parent's pause can catch it before it
 * made the unit or started the command (it then starts on resume). Tracked
 * units are not nested, so a tracked Run's own processes never are.
 */
export function liveRunFrozen(meta: RunMeta, dir: string): boolean {
  const record = meta.containment
  if (isContainmentRecord(record))
    return record.kind === 'cgroup' && isCgroupDir(record.path) && new CgroupUnit(record).isFrozen()
  const supervisor = supervisorArgs(meta, dir) && meta.process_identity?.pid
  const at = supervisor ? unifiedCgroupDirOf(supervisor) : undefined
  return at !== undefined && new CgroupUnit({kind: 'cgroup', path: at}).isFrozen()
}
