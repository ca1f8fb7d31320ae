/**
 * A lost Run's deadline from facts it cannot rewrite (SPEC: Supervision;
 * red-team 8 H-1): its run.json is the Run's to write, and a Run that
 * deleted or raised its `timeout_ms` there before killing its supervisor was
 * adopted with no timeout. Every step's wrapper (end-record.ts RECORD_END)
 * carries the attempt's deadline and timeout on its own command line, which
 * the command it runs cannot change; a reader takes the earliest of what the
 * wrappers and run.json say. A process that only looks like a wrapper can
 * make the deadline earlier, never later: the earliest wins.
 */
import {readFileSync} from 'node:fs'
import {dirname} from 'node:path'
import {sameStateDir} from '../../base/platform/home.js'
import {readProcStat} from '../../base/platform/process-identity.js'
import type {RunMeta} from '../../base/records/run.js'
import {JOIN_RECORDING} from './cgroup-unit.js'
import {RECORD_END} from './end-record.js'

/** What is known of the attempt's limit: the deadline (ms since the epoch) and the timeout (ms), each if any. */
export interface AttemptLimit {
  deadline?: number
  timeoutMs?: number
  /** A wrapper of this Run lives: its command's end will be recorded (end-record.ts). */
  wrapper: boolean
}

/** A wrapper's FILE TAG DEADLINE TIMEOUT GRACE, from its NUL-split command line; undefined for any other process. */
export function wrapperArgs(
  args: readonly string[],
): {file: string; tag: string; deadline: number; timeoutMs: number; killGraceMs?: number} | undefined {
  const [shell, dashC, script, name] = args
  let at = -1
  if (shell === '/bin/sh' && dashC === '-c') {
    if (script === RECORD_END && name === 'actors-run') at = 4
    if (script === JOIN_RECORDING && name === 'actors-join') at = args.indexOf('--', 4) + 1
  }
  if (at <= 0) return undefined
  const grace = Number(args[at + 4])
  return {
    file: args[at] ?? '',
    tag: args[at + 1] ?? '',
    deadline: msArg(args[at + 2]),
    timeoutMs: msArg(args[at + 3]),
    ...(args[at + 4] && Number.isSafeInteger(grace) && grace >= 0 ? {killGraceMs: grace} : {}),
  }
}

function msArg(text: string | undefined): number {
  const ms = Number(text)
  return text && Number.isSafeInteger(ms) && ms > 0 ? ms : 0
}

/** The wrapper `pid` when it is one of the Run `instance` in `dir` (its record's file there, its tag naming the instance). */
export function runWrapperOf(
  pid: number,
  instance: string,
  dir: string,
): {deadline: number; timeoutMs: number; killGraceMs?: number} | undefined {
  let args: string[]
  try {
    args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')
  } catch {
    return undefined
  }
  const found = wrapperArgs(args)
  if (!found?.file || !sameStateDir(dirname(found.file), dir)) return undefined
  try {
    const tag = JSON.parse(`${found.tag}0}`) as {run_instance_id?: unknown}
    return tag.run_instance_id === instance ? found : undefined
  } catch {
    return undefined
  }
}

/**
 * The attempt's limit for the lost Run `meta` in `dir` whose unit's live
 * members are `members`: the earliest deadline and shortest timeout of its
 * live wrappers' command lines and of run.json.
 */
export function provenAttemptLimit(meta: RunMeta, dir: string, members: readonly number[]): AttemptLimit {
  const deadlines: number[] = []
  const timeouts: number[] = []
  let wrapper = false
  for (const pid of members) {
    const found = runWrapperOf(pid, meta.run_instance_id, dir)
    if (!found) continue
    wrapper = true
    if (found.deadline) deadlines.push(found.deadline)
    if (found.timeoutMs) timeouts.push(found.timeoutMs)
  }
  const timeout = Number(meta.timeout_ms)
  const started = Date.parse(meta.attempt_started_at ?? meta.started_at ?? '')
  if (Number.isFinite(timeout) && timeout > 0) {
    timeouts.push(timeout)
    if (Number.isFinite(started)) deadlines.push(started + timeout)
  }
  return {
    ...(deadlines.length ? {deadline: Math.min(...deadlines)} : {}),
    ...(timeouts.length ? {timeoutMs: Math.min(...timeouts)} : {}),
    wrapper,
  }
}

/**
 * The step wrappers of the Run in `dir` that host `hostPid` supervises
 * (records/supervision-host.ts) started, alive: their command lines carry
 * the attempt's deadline and the launch's kill grace where the Run cannot
 * rewrite them. A wrapper is proven the host's by its parent (a process of
 * the Run is never the host's child) and by naming this Run's dir and instance.
 */
function hostedWrappers(meta: RunMeta, dir: string, hostPid: number) {
  const records = Array.isArray(meta.children_processes) ? meta.children_processes : []
  const found: NonNullable<ReturnType<typeof runWrapperOf>>[] = []
  for (const record of records) {
    const pid = record?.pid
    if (typeof pid !== 'number' || readProcStat(pid)?.ppid !== hostPid) continue
    const wrapper = runWrapperOf(pid, meta.run_instance_id, dir)
    if (wrapper) found.push(wrapper)
  }
  return found
}

/** The launch's kill grace of a hosted Run, from its live wrappers; undefined when no step runs (run.json's then). */
export function hostedKillGraceMs(meta: RunMeta, dir: string, hostPid: number): number | undefined {
  const graces = hostedWrappers(meta, dir, hostPid).flatMap((w) => (w.killGraceMs === undefined ? [] : [w.killGraceMs]))
  return graces.length ? Math.min(...graces) : undefined
}

/**
 * The earliest deadline (ms since the epoch) and the kill grace of a hosted
 * Run's live wrappers, when a step runs under a timeout: what a reader
 * judges a held host overdue by (executors/overdue.ts).
 */
export function hostedDeadline(
  meta: RunMeta,
  dir: string,
  hostPid: number,
): {deadline: number; killGraceMs?: number} | undefined {
  const wrappers = hostedWrappers(meta, dir, hostPid).filter((w) => w.deadline > 0)
  if (wrappers.length === 0) return undefined
  const graces = wrappers.flatMap((w) => (w.killGraceMs === undefined ? [] : [w.killGraceMs]))
  return {
    deadline: Math.min(...wrappers.map((w) => w.deadline)),
    ...(graces.length ? {killGraceMs: Math.min(...graces)} : {}),
  }
}
