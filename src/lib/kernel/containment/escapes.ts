/**
 * What a unit's end looks for beyond the unit (SPEC: Containment,
 * `leftover`). A process may leave its unit: as root it can write itself into
 * another cgroup, and under tracking `setsid` plus a cleared environment plus
 * a double fork leaves group, session, marker and ancestry at once. Two nets:
 *  - the `ACTORS_RUN_INSTANCE` marker: a process of this user that carries
 *    the Run's marker outside its cgroup is the Run's (only the Run's own
 *    processes inherit it); it is killed, and named in `leftover`;
 *  - orphans: a process of this user, started since the unit began in its
 *    working directory, whose parent is gone (re-parented to init or to the
 *    reaper above the supervisor) or whose group or session leader is gone,
 *    and that carries no Run's marker, may be one that left unseen. Nothing
 *    proves it is the Run's, so it is never signalled: it is named as
 *    `unknown` so the Run does not claim an empty unit.
 * See docs/containment.md for what neither can catch.
 */
import {readlinkSync, statSync} from 'node:fs'
import {findRunProcesses, listProcStats} from '../../base/platform/process-tree.js'
import {TICKS_PER_SECOND, readProcStat, ticksSinceBoot, type ProcStat} from '../../base/platform/process-identity.js'
import {environOf} from '../../base/platform/process-environ.js'
import {commandOf, type Leftover} from './unit.js'

/** Variables that put a process in a unit of its own (another Run, a supervisor, a `lock exec` unit). */
const UNIT_MARKS = ['ACTORS_RUN_INSTANCE=', 'ACTORS_SUPERVISOR=1', 'ACTORS_UNIT='].map((m) => Buffer.from(`\0${m}`))

/** The directory process `pid` works in; undefined when it is gone or not this user's to read. */
export function cwdOf(pid: number): string | undefined {
  try {
    return readlinkSync(`/proc/${pid}/cwd`)
  } catch {
    return undefined
  }
}

/** Whether `pid` belongs to this user (the owner of /proc/<pid> is its effective uid). */
export function ownProcess(pid: number): boolean {
  try {
    return typeof process.getuid !== 'function' || statSync(`/proc/${pid}`).uid === process.getuid()
  } catch {
    return false
  }
}

/**
 * Processes of this user carrying `ACTORS_RUN_INSTANCE=<id>` (and their
 * descendants), except `exclude`; with `stateDir` (as the kernel resolved it),
 * none that another Run of the state root holds (process-tree.ts); with
 * `startedSince`, none started before (its environment unread); `table`: the
 * process table a pass just read, instead of reading another.
 */
export function markerCarriers(
  runInstanceId: string,
  exclude: number[] = [],
  stateDir?: string,
  startedSince?: number,
  table?: readonly ProcStat[],
): number[] {
  const query = {rootPids: [], pgids: [], runInstanceId, exclude, stateDir, startedSince, table}
  return findRunProcesses(query).filter(ownProcess)
}

/** Whether `pid` carries a marker of some unit (any Run's instance, a supervisor, a lock exec unit) but those in `own`. */
export function carriesUnitMark(pid: number, own: string[] = []): boolean {
  const environ = environOf(pid)
  if (environ === undefined) return false
  let text = environ
  for (const mark of own) {
    const at = text.indexOf(`\0${mark}\0`)
    if (at >= 0) text = Buffer.concat([text.subarray(0, at), text.subarray(at + mark.length + 1)])
  }
  return UNIT_MARKS.some((mark) => text.indexOf(mark) >= 0)
}

/**
 * Whether the leader of `stat`'s process group or session is gone: a process
 * whose parent lives on (a reaper other than init, say) still shows that it
 * was left behind when the group it was started in lost its leader (a
 * killed step wrapper). A group's id is never handed to a new process while
 * a member lives, so a missing leader is a dead one.
 */
function leaderGone(stat: ProcStat): boolean {
  return [stat.pgid, stat.sid].some((leader) => leader > 1 && leader !== stat.pid && !alive(leader))
}

/** Whether process `pid` lives: a zombie is dead (an init that reaps late, as some VMs' do, leaves one for seconds). */
function alive(pid: number): boolean {
  const stat = readProcStat(pid)
  return stat !== undefined && stat.state !== 'Z'
}

/**
 * When the Run's state dir was made, in clock ticks since boot (as
 * /proc/<pid>/stat's start times): before anything of the Run started. Its
 * birth time is the file system's, not a field the Run can rewrite; where
 * it is not kept, 0 (every orphan in the Run's directory is looked at).
 */
export function stateDirBornTicks(dir: string): number {
  try {
    const born = statSync(dir).birthtimeMs
    const now = ticksSinceBoot()
    if (!(born > 0) || now === undefined) return 0
    const ageTicks = ((Date.now() - born) / 1000) * TICKS_PER_SECOND
    return Math.max(0, Math.floor(now - ageTicks - TICKS_PER_SECOND)) // a second's room for the clocks' skew
  } catch {
    return 0
  }
}

/** Where a unit's processes come from: when it began (clock ticks since boot, as /proc/<pid>/stat's start time) and its working directory. */
export interface UnitOrigin {
  sinceTicks: number
  cwd: string
}

/** Where to look beyond a unit: orphans since its origin, and (a lost Run) what is left in its recorded groups. */
export interface EscapeLook {
  origin?: UnitOrigin
  /** The process groups run.json records for a lost Run's commands (each led by a step wrapper, its own session). */
  groups?: readonly number[]
}

/**
 * Processes of this user that may have left the unit unseen, carrying no
 * unit's marker, in one pass over the process table; `exclude`: pids
 * accounted for already. Each is named `unknown`, with why it was looked at
 * (orphanReason, groupReason), and never signalled. `table`: the process
 * table a pass just read (a marker sweep that found nothing), instead of
 * reading another.
 */
export function unaccountedProcesses(
  look: EscapeLook,
  exclude: Iterable<number> = [],
  table?: readonly ProcStat[],
): Leftover[] {
  const skip = new Set([process.pid, ...exclude])
  // Orphans go to init or to the nearest reaper above: the one this (detached) process was handed to.
  const reapers = new Set([1, readProcStat(process.pid)?.ppid ?? 1])
  const groups = new Set((look.groups ?? []).filter((group) => Number.isInteger(group) && group > 1))
  const found: Leftover[] = []
  for (const stat of table ?? listProcStats()) {
    if (skip.has(stat.pid) || stat.state === 'Z') continue
    const reason = (look.origin && orphanReason(stat, look.origin, reapers)) ?? groupReason(stat, groups)
    if (!reason || !ownProcess(stat.pid) || carriesUnitMark(stat.pid)) continue
    const command = commandOf(stat.pid)
    if (command === '?') continue // gone meanwhile
    found.push({pid: stat.pid, command, unknown: true, reason})
  }
  return found
}

/**
 * An orphan started since the unit began, still in its working directory:
 * what may have left it unseen (setsid with a cleared environment). The
 * working directory keeps out what the rest of the machine daemonises
 * meanwhile (a busy machine has many such orphans); a process that also
 * changed directory is beyond this (docs/containment.md).
 */
function orphanReason(stat: ProcStat, origin: UnitOrigin, reapers: Set<number>): string | undefined {
  if (reapers.has(stat.pid) || (!reapers.has(stat.ppid) && !leaderGone(stat))) return undefined
  if (!(Number(stat.start) >= origin.sinceTicks) || cwdOf(stat.pid) !== origin.cwd) return undefined
  return 'an orphan of this user started during the Run in its working directory, carrying no Run marker: it may have left the unit (setsid with a cleared environment); not signalled, as nothing proves it is the Run'
}

/**
 * Still in one of a lost Run's recorded process groups, or their sessions,
 * whose leader (its step wrapper) is gone: left behind by a Run that killed
 * it, wherever it now works (`cd /`) and whatever run.json now says of its
 * directory. A group's id is never reused while a member lives, so such a
 * process was started in that group; but the record naming the group is the
 * Run's to rewrite, so it is named, never signalled.
 */
function groupReason(stat: ProcStat, groups: Set<number>): string | undefined {
  if (groups.size === 0) return undefined
  const leader = [stat.pgid, stat.sid].find((id) => groups.has(id) && id !== stat.pid)
  if (leader === undefined || alive(leader)) return undefined
  return `still in the process group or session of the Run's step wrapper (${leader}), which is gone: left behind by a Run that killed it; not signalled, as the record naming that group is the Run's to rewrite`
}
