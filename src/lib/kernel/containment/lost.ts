/**
 * A Run whose supervisor vanished (SPEC: Containment, lost supervisor): its
 * unit as run.json records it, for the reader that takes the Run over
 * (executors/take-over.ts) and for ending what is left of one settled
 * `exited` before its locks pass on, so a lock is never held by two live
 * units. Tracked units are found through the recorded command processes that
 * still match their identities and the Run's marker.
 */
import {dirname} from 'node:path'
import {ancestorsOf, isSameProcess, ledGroups, readProcStat} from '../../base/platform/process-identity.js'
import type {RunProcessQuery} from '../../base/platform/process-tree.js'
import type {ChildProcessRecord, RunMeta} from '../../base/records/run.js'
import {homeKey, killUnitSync, openUnit, runMarkOf} from './index.js'
import {runUnitOwner} from './proof.js'
import {findUnitByFacts, isRunsProcess} from './unit-facts.js'
import {cgroupPathOf, runCgroupsOfPath} from './caller-cgroup.js'
import {runWrapperOf} from './run-deadline.js'
import {leftoverAlive, type Leftover, type Unit, type UnitUsage} from './unit.js'
import {stateDirBornTicks, unaccountedProcesses} from './escapes.js'

/**
 * The command processes run.json records that are still those processes and
 * the Run's: with its supervisor gone, a recorded process is the Run's only
 * while it carries the Run's state dir.
 */
export function liveRecordedCommands(meta: RunMeta, dir: string): ChildProcessRecord[] {
  const records: ChildProcessRecord[] = Array.isArray(meta.children_processes) ? meta.children_processes : []
  return records.filter((r) => r?.identity && isSameProcess({...r.identity, pid: r.pid}) && isRunsProcess(r.pid, dir))
}

/** The processes of `meta`'s Run (read from `dir`), as a unit that re-verifies recorded identities on every sweep. */
export function recordedRunUnit(meta: RunMeta, dir: string): Unit {
  const query = (): RunProcessQuery => {
    const still = liveRecordedCommands(meta, dir)
    return {
      rootPids: still.map((r) => r.pid),
      pgids: ledGroups(still),
      runInstanceId: meta.run_instance_id,
      stateDir: dir,
      // No supervisor to spare: run.json's `pid` is the Run's to write, and would hide whatever it names.
      exclude: [],
    }
  }
  return openUnit(meta.containment, query, runUnitOwner(dir, meta))
}

/**
 * Kill what is left of a lost Run's unit and remove it. Returns its usage and
 * whatever could not be ended or may have left the unit unseen, as a normal
 * end names it (escapes.ts): a Run that killed its supervisor and its step
 * wrapper, then cleared its environment, is in no unit a reader can find,
 * and its end must not claim an empty one. A Run on another host is not
 * this machine's to end.
 */
export function endLostRunUnit(
  meta: RunMeta,
  dir: string,
  thisHost: string,
): {leftover: Leftover[]; usage?: UnitUsage} {
  if (!runsOnThisMachine(meta, dir, thisHost)) return {leftover: []}
  const unit = recordedRunUnit(meta, dir)
  const ended = killUnitSync(unit, undefined, runMarkOf(dir, meta.run_instance_id))
  const usage = unit.record.kind === 'cgroup' ? unit.usage() : undefined
  if (!ended.some(leftoverAlive)) unit.remove()
  const origin = typeof meta.cwd === 'string' ? {sinceTicks: stateDirBornTicks(dir), cwd: meta.cwd} : undefined
  const escaped = unaccountedProcesses(
    {origin, groups: recordedGroups(meta)},
    ended.map((item) => item.pid),
  )
  return {leftover: [...ended, ...escaped], usage}
}

/** The process groups run.json records for the Run's commands (each led by a step wrapper). */
function recordedGroups(meta: RunMeta): number[] {
  const records: ChildProcessRecord[] = Array.isArray(meta.children_processes) ? meta.children_processes : []
  return [meta.pgid, ...records.map((record) => record?.pgid)].filter(
    (group): group is number => typeof group === 'number',
  )
}

/**
 * Whether the Run is this machine's (`thisHost`): run.json's `host` says so, or its unit is seen here whatever
 * `host` says (a Run that wrote another name there was left unsupervised, its timeout and its locks with it).
 */
export function runsOnThisMachine(meta: RunMeta, dir: string, thisHost: string): boolean {
  return typeof meta.host !== 'string' || meta.host === thisHost || unitVisibleHere(meta, dir)
}

/**
 * Whether the Run's unit can be seen on this machine, whatever run.json's
 * `host` says (the Run writes that file: one that named another machine was
 * left to nobody, its timeout with it): a process carrying its state dir, the
 * cgroup named after it that one is in, or a member of its recorded unit.
 */
export function unitVisibleHere(meta: RunMeta, dir: string): boolean {
  if (findUnitByFacts(dir, homeKey(dirname(dirname(dir)))).pids.length > 0) return true
  try {
    return recordedRunUnit(meta, dir).members().length > 0
  } catch {
    return false // a record no reader opens (proof.ts refuses it): nothing of it is seen here
  }
}

/**
 * Whether process `pid` (this one by default) runs inside the unit of the
 * Run `meta` in `dir`, by facts its environment cannot change: its cgroup
 * (or one above it) is named after the Run, or it, an ancestor, or the
 * leader of its group or session is a member of the unit (`members`), a
 * wrapper of the Run's steps, or a process carrying the Run's state dir.
 * A process that cleared its environment (`env -i`) is still found.
 */
export function insideRunUnit(meta: RunMeta, dir: string, members: readonly number[], pid = process.pid): boolean {
  const path = cgroupPathOf(pid)
  if (path && runCgroupsOfPath(path).some((cgroup) => cgroup.instance === meta.run_instance_id)) return true
  const ofRun = (p: number) =>
    members.includes(p) || isRunsProcess(p, dir) || runWrapperOf(p, meta.run_instance_id, dir) !== undefined
  const own = readProcStat(pid)
  if (!own) return false
  if (ofRun(pid)) return true
  for (const ancestor of ancestorsOf(pid)) if (ofRun(ancestor)) return true
  return [own.pgid, own.sid].some((leader) => leader > 1 && ofRun(leader))
}
