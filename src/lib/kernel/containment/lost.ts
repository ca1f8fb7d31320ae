/**
 * A Run whose supervisor vanished (SPEC: Containment, lost supervisor): its
 * unit as run.json records it, for the reader that takes the Run over
 * (executors/take-over.ts) and for ending what is left of one settled
 * `exited` before its locks pass on, so a lock is never held by two live
 * units. Tracked units are found through the recorded command processes that
 * still match their identities and the Run's marker.
 */
import {isSameProcess, ledGroups} from '../../base/platform/process-identity.js'
import type {RunProcessQuery} from '../../base/platform/process-tree.js'
import type {ChildProcessRecord, RunMeta} from '../../base/records/run.js'
import {killUnitSync, openUnit, runMarkOf} from './index.js'
import {runUnitOwner} from './proof.js'
import {isRunsProcess} from './unit-facts.js'
import {leftoverAlive, type Leftover, type Unit, type UnitUsage} from './unit.js'

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
 * whatever could not be ended (normally nothing). A Run on another host is
 * not this machine's to end.
 */
export function endLostRunUnit(
  meta: RunMeta,
  dir: string,
  thisHost: string,
): {leftover: Leftover[]; usage?: UnitUsage} {
  if (typeof meta.host === 'string' && meta.host !== thisHost) return {leftover: []}
  const unit = recordedRunUnit(meta, dir)
  const leftover = killUnitSync(unit, undefined, runMarkOf(dir, meta.run_instance_id))
  const usage = unit.record.kind === 'cgroup' ? unit.usage() : undefined
  if (!leftover.some(leftoverAlive)) unit.remove()
  return {leftover, usage}
}
