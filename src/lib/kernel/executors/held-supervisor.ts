/**
 * A supervisor its own Run holds still (H1 of the trust work: a Run's
 * timeout lives in its supervisor, so a Run that stops its supervisor
 * outlives it). Every reader that proves a Run's supervisor lets it go
 * here: stopped (SIGSTOP: no kernel action stops one), it is continued;
 * frozen in a cgroup of its own, thawed; traced by a process of its Run
 * (ptrace), which nothing can undo from outside, it is killed, and the Run
 * is lost: caught holding the Run's lock, it would hold it for ever, and
 * every reader would wait it out.
 */
import {readFileSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {unifiedCgroupDirOf} from '../containment/cgroup-fs.js'
import {procsOf, walkCgroups} from '../containment/cgroup-tree.js'
import {isRunsProcess} from '../containment/unit-facts.js'
import {readProcStat} from '../../base/platform/process-identity.js'
import {signalPids} from '../../base/platform/process-tree.js'

/**
 * Let the proven supervisor `pid` of the Run in `dir` go on; false when it
 * cannot (its Run traces it: killed here). `inRunCgroup`: it sits in a Run's
 * cgroup (its parent Run's), whose freeze is that Run's pause, not a hold.
 */
export function letHeldSupervisorGo(pid: number, dir: string, inRunCgroup: boolean): boolean {
  const tracer = tracerOf(pid)
  if (tracer && isRunsProcess(tracer, dir, pid)) {
    signalPids([pid], 'SIGKILL')
    return false
  }
  if (readProcStat(pid)?.state === 'T') signalPids([pid], 'SIGCONT')
  // Frozen in a cgroup no Run owns (a Run's own pause freezes only Runs' cgroups): thawed, as a SIGSTOP is continued.
  if (!inRunCgroup) thawForeignFreeze(pid)
  return true
}

/** The pid tracing `pid` (TracerPid of /proc/PID/status); undefined when none. */
function tracerOf(pid: number): number | undefined {
  try {
    const tracer = Number(/^TracerPid:\s*(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1])
    return tracer > 0 ? tracer : undefined
  } catch {
    return undefined
  }
}

/**
 * Write 0 to the cgroup.freeze of the cgroup holding `pid` when it reads 1
 * and holds nothing but `pid`: a cgroup made to freeze the supervisor alone
 * (a Run with the rights to), never a frozen session of the user's.
 */
function thawForeignFreeze(pid: number): void {
  const dir = unifiedCgroupDirOf(pid)
  if (!dir) return
  try {
    if (readFileSync(join(dir, 'cgroup.freeze'), 'utf8').trim() !== '1') return
    // Nothing else in it, nor in a cgroup below (cgroup.freeze holds those too).
    const walk = walkCgroups(dir)
    const held = procsOf(walk.dirs)
    if (!walk.complete || held.length !== 1 || held[0] !== pid) return
    writeFileSync(join(dir, 'cgroup.freeze'), '0')
  } catch {}
}
