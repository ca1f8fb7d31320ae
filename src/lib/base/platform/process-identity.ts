/**
 * Telling a live process from a recycled pid. On Linux the kernel's start time
 * of a process (field 22 of /proc/<pid>/stat, in clock ticks since boot) plus
 * the boot id is unique for the life of the machine; elsewhere we fall back to
 * `ps -o lstart=`, which is coarser but still changes when a pid is reused.
 */
import {execaLibrary} from './execa.js'
import {readFileSync} from 'node:fs'

export interface ProcessIdentity {
  pid: number
  /** Linux: start time in clock ticks since boot; elsewhere: `ps` lstart text. */
  start: string
  /** Linux boot id, so identities never match across reboots. */
  boot?: string
}

/** Clock ticks per second of /proc's times (USER_HZ: 100 on every Linux architecture Node runs on). */
export const TICKS_PER_SECOND = 100

/** Clock ticks since boot now (as /proc/<pid>/stat's start times); undefined where /proc/uptime cannot be read. */
export function ticksSinceBoot(): number | undefined {
  try {
    const uptime = Number.parseFloat(readFileSync('/proc/uptime', 'utf8'))
    return Number.isFinite(uptime) ? Math.floor(uptime * TICKS_PER_SECOND) : undefined
  } catch {
    return undefined
  }
}

let cachedBootId: string | undefined | null = null

/** This boot's id (Linux), undefined where there is none to read. */
export function bootId(): string | undefined {
  if (cachedBootId === null) {
    try {
      cachedBootId = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim()
    } catch {
      cachedBootId = undefined
    }
  }
  return cachedBootId
}

export interface ProcStat {
  pid: number
  /** The process's name (field 2, without its parens); absent where ps stands in for /proc. */
  comm?: string
  state: string
  ppid: number
  pgid: number
  sid: number
  start: string
}

/** Parse /proc/<pid>/stat; undefined when the process is gone. The comm field may hold spaces and parens. */
export function readProcStat(pid: number): ProcStat | undefined {
  let text: string
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8')
  } catch {
    return undefined
  }
  const close = text.lastIndexOf(')')
  if (close < 0) return undefined
  const fields = text.slice(close + 2).split(' ')
  // fields[0] is field 3 (state); start time is field 22 → fields[19].
  return {
    pid,
    comm: text.slice(text.indexOf('(') + 1, close),
    state: fields[0],
    ppid: Number(fields[1]),
    pgid: Number(fields[2]),
    sid: Number(fields[3]),
    start: fields[19],
  }
}

let procAvailable: boolean | undefined

/** Whether /proc is there (Linux), checked on first use rather than at import. */
function hasProc(): boolean {
  if (procAvailable === undefined) {
    try {
      readFileSync('/proc/self/stat')
      procAvailable = true
    } catch {
      procAvailable = false
    }
  }
  return procAvailable
}

/** The identity of a running process, or undefined when it does not exist. */
export function readProcessIdentity(pid: number): ProcessIdentity | undefined {
  if (!Number.isInteger(pid) || pid <= 0) return undefined
  if (hasProc()) {
    const stat = readProcStat(pid)
    if (!stat || stat.state === 'Z') return undefined
    return {pid, start: stat.start, boot: bootId()}
  }
  try {
    // Only where /proc is missing (macOS): execa is loaded by this fallback alone; it throws when ps exits non-zero.
    const start = execaLibrary()
      .execaSync('ps', ['-o', 'lstart=', '-p', String(pid)], {stdio: ['ignore', 'pipe', 'ignore']})
      .stdout.trim()
    return start ? {pid, start} : undefined
  } catch {
    return undefined
  }
}

/** True when `identity` still names the same live process (pid not recycled, not a zombie). */
export function isSameProcess(identity: ProcessIdentity | undefined): boolean {
  if (!identity || typeof identity.pid !== 'number') return false
  const now = readProcessIdentity(identity.pid)
  return now !== undefined && now.start === identity.start && (now.boot ?? '') === (identity.boot ?? '')
}

/** Whether process `pid` is stopped (by a signal, or under a tracer): it lets go of nothing until resumed. */
export function isStopped(pid: number): boolean {
  const state = readProcStat(pid)?.state
  return state === 'T' || state === 't'
}

/**
 * The processes that vouch for process `pid`: itself, each of its
 * ancestors, and the leader of the process group and of the session of each
 * of those, each once (init, and a leader outside this pid namespace, 0, left
 * out). Yields undefined for a member of the lineage that cannot be read
 * (gone meanwhile), and lets the caller decide what that proves.
 */
export function* lineageWithLeaders(pid: number): Generator<number | undefined> {
  const seen = new Set<number>()
  for (const member of [pid, ...ancestorsOf(pid)]) {
    const stat = readProcStat(member)
    if (!stat) {
      yield undefined
      continue
    }
    for (const at of [member, stat.pgid, stat.sid]) {
      if (at <= 1 || seen.has(at)) continue
      seen.add(at)
      yield at
    }
  }
}

/** Ancestors looked at before giving up (a process tree is never this deep). */
const MAX_ANCESTRY = 64

/** The ancestors of process `pid`, its parent first, up to (not including) init or a process gone meanwhile. */
export function* ancestorsOf(pid: number): Generator<number> {
  let at = readProcStat(pid)?.ppid
  for (let step = 0; at !== undefined && at > 1 && step < MAX_ANCESTRY; step++) {
    yield at
    at = readProcStat(at)?.ppid
  }
}

/**
 * The process groups of `records` that can be proven theirs: a record's pgid
 * is a claim a Run can rewrite (to another process's group), so only a
 * group its verified process leads now (pgid == pid: the command the
 * supervisor started detached leads its own) is signalled as a group.
 */
export function ledGroups(records: ReadonlyArray<{pid: number}>): number[] {
  return [...new Set(records.map((r) => r.pid).filter((pid) => pid > 1 && readProcStat(pid)?.pgid === pid))]
}
