/**
 * A Run's timeout, enforced by whoever reads the Run once its supervisor is
 * overdue. The timeout lives in the supervisor, and a Run can hold its
 * supervisor still in more ways than a reader can undo (a tracer that cut
 * every tie to the Run, a freezer cgroup shared with another process, a frozen
 * ancestor, the v1 freezer, a cgroup named like a Run's: held-supervisor.ts
 * undoes the ones it can tell apart). Time is the fact the Run cannot fake:
 * the launch writes on the supervisor's command line how long after its
 * start every attempt must have timed out and been ended, and the process's
 * start time is the kernel's.
 */
import {readFileSync} from 'node:fs'
import {TICKS_PER_SECOND, readProcStat} from '../../base/platform/process-identity.js'
import {recordedKillGraceMs, type RunMeta} from '../../base/records/run.js'

/** Room per attempt beyond its timeout and kill grace (the supervisor ends the tree, then records). */
const ATTEMPT_ROOM_MS = 2000
/** Room for the whole Run (a loaded machine; the supervisor's own start). */
const RUN_ROOM_MS = 5000

/**
 * The supervisor's OVERDUE_MS argument for the Run `meta` describes, or
 * undefined when a reader cannot know it: no timeout, or Recipe `locks`,
 * which the supervisor waits for (queued, command not started) for as long
 * as they are held elsewhere, before any attempt's clock starts.
 */
export function overdueAfterMs(
  meta: Pick<RunMeta, 'timeout_ms' | 'retry' | 'kill_grace_ms'> & {locks?: unknown},
): number | undefined {
  const timeout = Number(meta.timeout_ms)
  if (!Number.isFinite(timeout) || timeout <= 0) return undefined
  if (Array.isArray(meta.locks) && meta.locks.length > 0) return undefined
  const attempts = Math.max(1, Number(meta.retry) || 1)
  return attempts * (timeout + recordedKillGraceMs(meta) + ATTEMPT_ROOM_MS) + RUN_ROOM_MS
}

/**
 * An adopter's OVERDUE_MS (take-over.ts): from its own start, the rest of
 * the attempt under way until its proven deadline, then every attempt left,
 * each with its kill grace and room; undefined when no deadline is proven.
 */
export function adopterOverdueMs(
  meta: Pick<RunMeta, 'retry' | 'kill_grace_ms'> & {attempts?: unknown},
  limit: {deadline?: number; timeoutMs?: number},
): number | undefined {
  if (limit.deadline === undefined) return undefined
  const grace = recordedKillGraceMs(meta)
  const attempt = Math.max(1, Number(meta.attempts) || 1)
  const left = Math.max(0, Math.max(1, Number(meta.retry) || 1) - attempt)
  const perAttempt = (limit.timeoutMs ?? 0) + grace + ATTEMPT_ROOM_MS
  return Math.max(0, limit.deadline - Date.now()) + grace + ATTEMPT_ROOM_MS + left * perAttempt + RUN_ROOM_MS
}

/** Whether process `pid` has been alive for longer than `ms`; false when that cannot be read. */
export function aliveLongerThan(pid: number, ms: number): boolean {
  const start = Number(readProcStat(pid)?.start)
  let uptime: number
  try {
    uptime = Number.parseFloat(readFileSync('/proc/uptime', 'utf8'))
  } catch {
    return false
  }
  if (!Number.isFinite(start) || !Number.isFinite(uptime)) return false
  return (uptime - start / TICKS_PER_SECOND) * 1000 > ms
}

/**
 * Whether a host (records/supervision-host.ts) is overdue for the Run
 * `deadline` describes: the attempt's deadline from a step wrapper's command
 * line, passed by its kill grace and the attempt's room. The host's own
 * start says nothing of the Run's, so the deadline the wrapper carries is
 * the fact a held host is judged by.
 */
export function hostOverdue(deadline: {deadline: number; killGraceMs?: number} | undefined): boolean {
  if (!deadline) return false
  const grace = recordedKillGraceMs({kill_grace_ms: deadline.killGraceMs})
  return Date.now() > deadline.deadline + grace + ATTEMPT_ROOM_MS + RUN_ROOM_MS
}
