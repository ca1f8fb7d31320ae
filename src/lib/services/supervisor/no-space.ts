/**
 * A supervisor on a full disk (SPEC: Supervision; a full disk never loses an
 * end). The command's output goes straight to its log files, so a disk it
 * fills fails the supervisor's own writes: bookkeeping that can wait (pids in
 * run.json, the attempt count) is skipped with a note, never fatal; the end
 * is written into the room kept since the launch (runs/end-reserve.ts); and a
 * start that cannot be recorded settles the Run `failed` (`no_space`) rather
 * than leaving it `running` behind a dead supervisor.
 */
import {withLockSync} from '../../base/platform/file-lock.js'
import {appendStateFile} from '../../base/platform/private-files.js'
import {releaseEndReserve} from '../../kernel/runs/end-reserve.js'
import {
  readRunMetaRaw,
  readRunResult,
  runFile,
  settledResult,
  updateRunMeta,
  writeResultLocked,
} from '../../kernel/runs/store.js'
import {traceQuietly} from '../../kernel/runs/trace.js'
import type {RunMeta} from '../../base/records/run.js'

export {releaseEndReserve}

/** Whether `error` says the file system is full (or the user's quota spent). */
export function isNoSpace(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException | undefined)?.code
  return code === 'ENOSPC' || code === 'EDQUOT'
}

/**
 * Whether `error` is a lock that could not be taken for want of room: taking
 * one makes a link, a new inode, and a Run that used up the disk's inodes
 * left none (the end still has its own: end-reserve.ts).
 */
export function isNoRoomForLock(error: unknown): boolean {
  return isNoSpace(error) && (error as NodeJS.ErrnoException).syscall === 'symlink'
}

/** Say in the Run's stderr.log and Trace what could not be written (each best effort: the disk may still be full). */
export function noteWriteFailure(dir: string, meta: RunMeta, what: string, error: unknown): void {
  const message = `${what}: ${(error as Error).message}`
  try {
    appendStateFile(runFile(dir, 'stderr'), `actors: ${message}\n`)
  } catch {}
  traceQuietly(dir, meta, {kind: 'runtime.write_failed', summary: message, level: 'warn'})
}

/** updateRunMeta for bookkeeping the Run can live without: a failed write is noted, never fatal. */
export function updateRunMetaOrNote(dir: string, meta: RunMeta, what: string, change: (m: RunMeta) => RunMeta): void {
  try {
    updateRunMeta(dir, change)
  } catch (error) {
    noteWriteFailure(dir, meta, `could not record ${what} in run.json`, error)
  }
}

/**
 * The start of the Run could not be written (run.json on a full disk): end
 * it `failed` with reason `no_space` in the reserved room, so no reader finds
 * it `running` with no supervisor. Returns false when `error` is not a full
 * disk (the caller rethrows).
 */
export function settleUnstartedNoSpace(dir: string, error: unknown): boolean {
  if (!isNoSpace(error)) return false
  releaseEndReserve(dir)
  withLockSync(runFile(dir, 'lock'), () => {
    const meta = readRunMetaRaw(dir)
    if (!meta || readRunResult(dir, meta)) return
    const result = {...settledResult(meta, 'failed', 'no_space'), error: (error as Error).message}
    writeResultLocked(dir, meta, result)
  })
  return true
}

/**
 * The supervisor is dying of an error (its process exits next): say so in the
 * Run's stderr.log, since the supervisor's own stderr reaches nobody, and free
 * the reserve so the read that settles the lost Run can write its end.
 */
export function noteSupervisorDeath(dir: string, error: unknown): void {
  try {
    appendStateFile(runFile(dir, 'stderr'), `actors supervisor: ${(error as Error).message}\n`)
  } catch {}
  releaseEndReserve(dir)
}
