/**
 * A Run's processes as one unit (SPEC: Containment), whatever they do: fork
 * after a signal, setsid, double fork, ignore SIGTERM. Two kinds behind one
 * interface: a cgroup of its own (cgroup-unit.ts) where the machine allows,
 * else tracking by process group, session and an environment marker
 * (tracked-unit.ts). `run.json` `containment` records which, so any later
 * reader (control, reconciliation, prune) opens the same unit.
 */
import {readFileSync} from 'node:fs'

/** What run.json (and a lock holder) records about a unit. */
export type ContainmentRecord =
  | {kind: 'cgroup'; path: string; v1?: {memory?: string; pids?: string; cpu?: string}}
  | {kind: 'tracked'; marker?: string}

/** A unit's usage: CPU time of all its processes so far, memory now and at its peak. */
export interface UnitUsage {
  cpu_seconds: number | null
  memory_bytes: number | null
  peak_memory_bytes: number | null
}

/**
 * A process of the Run that outlived its unit's end (SPEC: result.json
 * `leftover`; docs/containment.md). Plain `{pid, command}`: a member that
 * could not be ended. With `outside: "marker"`: found outside the unit by
 * the Run's ACTORS_RUN_INSTANCE marker, then killed (`ended` says whether it
 * is gone). With `unknown: true`: a process that may have left the unit
 * unseen (`reason` says why it is named); never signalled.
 */
export interface Leftover {
  pid: number
  command: string
  outside?: 'marker'
  ended?: boolean
  unknown?: true
  reason?: string
}

/** Whether a leftover is a process known to be still alive (not one ended by the marker sweep, nor an unknown). */
export function leftoverAlive(item: Leftover): boolean {
  return item.ended !== true && item.unknown !== true
}

/** Resource limits of a Run (Recipe `limits`, `run --memory/--cpus/--pids`), normalised. */
export interface UnitLimits {
  memory_bytes?: number
  cpus?: number
  pids?: number
}

/**
 * Where a wrapper records its command's end: the file, and the record's head
 * (end-record.ts endRecordTag); and the attempt's deadline and timeout it
 * carries on its command line (run-deadline.ts), absent for none, and the
 * launch's kill grace (read from there for a Run a host supervises).
 */
export interface EndRecordTarget {
  file: string
  tag: string
  deadline?: number
  timeoutMs?: number
  killGraceMs?: number
}

/** The wrapper's arguments after the join's: FILE TAG DEADLINE TIMEOUT GRACE (end-record.ts RECORD_END). */
export function endRecordArgs(end: EndRecordTarget): string[] {
  const grace = end.killGraceMs === undefined ? '-' : String(end.killGraceMs)
  return [end.file, end.tag, String(end.deadline ?? 0), String(end.timeoutMs ?? 0), grace]
}

export interface Unit {
  readonly record: ContainmentRecord
  /**
   * The argv that runs `argv` inside the unit (a cgroup joins before exec;
   * unchanged when tracking); with `end`, through a wrapper that stays its
   * parent and records its end there (end-record.ts).
   */
  wrap(argv: string[], end?: EndRecordTarget): string[]
  /** Environment the command needs to be recognised as a member (the tracked marker). */
  memberEnv(): Record<string, string>
  /** Live (non-zombie) member pids now. */
  members(): number[]
  /** Members that are not Runs launched from inside this one (their supervisors and units): what a normal end sweeps. */
  strays(): number[]
  /** Send `signal` to every member found now; returns the pids signalled. */
  signal(signal: NodeJS.Signals): number[]
  /** SIGKILL every member now, including ones forked meanwhile where the kernel allows (cgroup.kill). */
  kill(): void
  /** Freeze every member (and any process they fork); true once the kernel confirms. */
  freeze(): boolean
  /** Undo freeze. */
  thaw(): void
  /** Usage so far (a tracked unit samples its members now, unless `fresh` is false: then what earlier samples kept). */
  usage(fresh?: boolean): UnitUsage
  /** Which limit ended the unit's processes, if one did. */
  limitHit(): 'memory_limit' | 'pids_limit' | undefined
  /** Forget the unit (rmdir its cgroups); false while it still has members. */
  remove(): boolean
}

/** Whether `value` is a containment record as written by this kernel (run.json is read back by any command). */
export function isContainmentRecord(value: unknown): value is ContainmentRecord {
  if (!value || typeof value !== 'object') return false
  const record = value as {kind?: unknown; path?: unknown}
  if (record.kind === 'tracked') return true
  return record.kind === 'cgroup' && typeof record.path === 'string'
}

/** The command line of `pid` for a leftover report ("?" once it is gone). */
export function commandOf(pid: number): string {
  try {
    const text = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean).join(' ')
    return text.slice(0, 200) || '?'
  } catch {
    return '?'
  }
}
