/**
 * A lost supervisor is not a lost Run (SPEC: Supervision, Containment): the
 * reader that finds a local Run's supervisor gone, under the Run's lock,
 * starts a new supervisor that adopts it while its unit has live members
 * (or while its recorded end says the plan goes on), or writes the end the
 * Run recorded itself (containment/end-record.ts). Only a unit that ended
 * with no record of its end is left to be settled `exited`.
 */
import {insideRunUnit, recordedRunUnit, unitVisibleHere} from '../containment/lost.js'
import {provenAttemptLimit, type AttemptLimit} from '../containment/run-deadline.js'
import {runCgroupOf} from '../containment/caller-cgroup.js'
import {supervisorArgs} from '../../base/records/supervisor-args.js'
import {readProcessIdentity, readProcStat} from '../../base/platform/process-identity.js'
import {afterRecordedEnd, recordedAttemptEnd} from '../containment/end-record.js'
import {writeRunMetaLocked} from '../runs/store.js'
import {traceQuietly} from '../runs/trace.js'
import type {RunMeta} from '../../base/records/run.js'
import type {ProcessIdentity} from '../../base/platform/process-identity.js'

/**
 * What a take-over did: a new supervisor adopted the Run, or the Run's end is
 * `result` (its recorded end, its timeout, or nothing left to record one).
 */
export type TakeOver = {adopted: RunMeta} | {result: Record<string, unknown>}

/** A supervisor as started: its pid, and its identity when it could be read (it may have died at once). */
export type StartedSupervisor = {pid: number; identity: ProcessIdentity | undefined}

/**
 * Take over the lost local Run in `dir` (caller holds its lock); undefined
 * when there is nothing to take over. `startAdopter` starts the adopting
 * supervisor and returns its pid and identity.
 */
export function takeOverLocalRun(
  meta: RunMeta,
  dir: string,
  startAdopter: (limit: AttemptLimit) => StartedSupervisor,
  startAfresh: () => StartedSupervisor,
): TakeOver | undefined {
  if (meta.ending) return undefined // a stop or kill asked before the loss: ended as asked
  // A Run whose command never started (it waited for its locks, or its supervisor died starting it) is a queue
  // entry: a supervisor of its own starts it afresh. Not while anything of it is seen here, which no queue entry has.
  if (neverStarted(meta) && !recordedAttemptEnd(meta, dir) && !unitVisibleHere(meta, dir))
    return {adopted: restart(meta, dir, startAfresh)}
  if (!meta.containment) return undefined
  const members = recordedRunUnit(meta, dir).members()
  // A process of the Run itself (it reads its own state, its environment cleared or not) would start the adopter
  // inside the Run's unit, which it would wait to empty: a reader from outside takes the Run over.
  if (insideRunUnit(meta, dir, members)) return {adopted: meta}
  // run.json was made to name another process while the Run's own supervisor lives on, the parent of a command it
  // started: that one is the Run's supervisor again, and no second one is started beside it.
  const own = liveParentSupervisor(members, meta, dir)
  if (own) {
    const restored: RunMeta = {...meta, pid: own.pid, process_identity: own.identity}
    writeRunMetaLocked(dir, restored, {durable: false})
    return {adopted: restored}
  }
  const end = recordedAttemptEnd(meta, dir)
  const live = members.length > 0
  if (!live && !end) return undefined
  // The deadline is the earliest its wrappers' command lines and run.json prove (run-deadline.ts): past it, the
  // reader ends the unit as a timeout would, rather than start one more adopter a Run could kill again.
  const limit = provenAttemptLimit(meta, dir, members)
  if (live && limit.deadline !== undefined && Date.now() >= limit.deadline) return {result: TIMED_OUT}
  // Neither supervisor nor wrapper is left to record the running step's end, nor to prove its deadline: the unit is
  // ended now, settled `exited` as it would be once it emptied (docs/containment.md).
  if (live && !end && !limit.wrapper) return {result: {status: 'exited', reason: 'supervisor_lost'}}
  const next = !live && end ? afterRecordedEnd(meta, end) : 'continue'
  if (next === 'unknown') return undefined
  if (next === 'end' && end) return {result: resultFields(meta, end)}
  const {pid, identity} = startAdopter(limit)
  // Dead before its identity could be read (the Run kills each adopter as it starts): recorded without one, it would
  // count as a supervisor still starting for the launch grace (30 s). The record stays the lost one's, and the next
  // read takes the Run over again, or ends it at its deadline.
  if (!identity) return {adopted: meta}
  const adopted: RunMeta = {
    ...meta,
    pid,
    process_identity: identity,
    adopted_at: new Date().toISOString(),
  }
  writeRunMetaLocked(dir, adopted, {durable: false})
  return {adopted}
}

/**
 * No command of the Run ever started: no command process recorded. A start time alone is no start: a host records
 * it when it takes the Run, and one killed before it spawned the step left a Run that had never run read as lost
 * (red-team 17 N17-59; the caller also asks that no end is recorded and nothing of the unit is seen).
 */
function neverStarted(meta: RunMeta): boolean {
  return (
    (meta.status === 'queued' || meta.status === 'running') &&
    meta.child_pid === undefined &&
    !meta.children_processes?.length
  )
}

/** Start the never-started Run's supervisor again, recorded as its own (it starts the Run as a launch would). */
function restart(meta: RunMeta, dir: string, startAfresh: () => StartedSupervisor) {
  const {pid, identity} = startAfresh()
  if (!identity) return meta // dead at once: the next read starts it afresh again (see takeOverLocalRun)
  const restarted: RunMeta = {...meta, pid, process_identity: identity, restarted_at: new Date().toISOString()}
  writeRunMetaLocked(dir, restarted, {durable: false})
  const summary = 'its supervisor was lost before the command started; a new one starts it'
  traceQuietly(dir, restarted, {kind: 'runtime.restarted', summary})
  return restarted
}

/** The Run's supervisor, alive as the parent of a process of its unit (proven as readers prove one). */
function liveParentSupervisor(
  members: number[],
  meta: RunMeta,
  dir: string,
): {pid: number; identity: ProcessIdentity} | undefined {
  for (const pid of members) {
    const ppid = readProcStat(pid)?.ppid
    const identity = ppid ? readProcessIdentity(ppid) : undefined
    if (!ppid || !identity || runCgroupOf(ppid)?.instance === meta.run_instance_id) continue
    if (supervisorArgs({...meta, process_identity: identity}, dir)) return {pid: ppid, identity}
  }
  return undefined
}

/** result.json fields of a Run ended at its deadline by a reader: as its supervisor's timeout words it. */
const TIMED_OUT = {status: 'failed', exit_code: null, signal: null, reason: 'timeout'}

/** result.json fields of a Run whose end is the one its unit recorded. */
function resultFields(meta: RunMeta, end: NonNullable<ReturnType<typeof recordedAttemptEnd>>): Record<string, unknown> {
  const status = end.exitCode === 0 ? 'done' : 'failed'
  return {
    status,
    exit_code: end.exitCode,
    signal: end.signal,
    reason: status === 'done' ? null : end.signal ? 'signal' : 'exit_code',
    attempts: Number(meta.attempts) || 1,
  }
}
