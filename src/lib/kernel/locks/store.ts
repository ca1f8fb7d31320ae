/**
 * Reading and writing lock state files. Every change happens under the
 * lock's mutex (src/lib/base/platform/file-lock.ts) with an atomic write; several locks are
 * taken in sorted name order, so two requests for `a,b` and `b,a` can never
 * hold one mutex each and wait for the other. A state file that is corrupt,
 * oversized or of a foreign schema fails closed, naming the file.
 */
import {makePrivateDir, refuseLinkedDir} from '../../base/platform/private-files.js'
import {dirname} from 'node:path'
import {corruptStateError} from '../../base/platform/errors.js'
import {withLockSync} from '../../base/platform/file-lock.js'
import {readJsonFile, writeJsonAtomic} from '../../base/platform/state-files.js'
import {LOCK_SCHEMA, locksDir, lockMutexFile, lockStateFile, type LockState} from '../../base/records/lock.js'

/** A lock file is small: a few hundred holders and waiters at most. */
const MAX_LOCK_FILE_BYTES = 256 * 1024

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
}

/** Check the parts of a state file that decisions rest on; anything else refuses, naming the file. */
function checkState(file: string, state: LockState): LockState {
  if (!Number.isInteger(state.slots) || state.slots < 1)
    throw corruptStateError(file, `has slots ${JSON.stringify(state.slots)}, expected a whole number >= 1`)
  for (const field of ['holders', 'queue'] as const) {
    const list = state[field]
    if (
      !Array.isArray(list) ||
      !list.every((entry) => isObject(entry) && isObject(entry.holder) && typeof entry.holder.kind === 'string')
    ) {
      throw corruptStateError(file, `has malformed ${field} (expected a list of {holder, label, since})`)
    }
  }
  if (!state.queue.every((entry) => isObject(entry.waiter) && Number.isInteger(entry.waiter.pid))) {
    throw corruptStateError(file, 'has a queue entry without a waiter process identity')
  }
  return state
}

/** The state of lock `name`, or a fresh idle one when it has no file yet. */
export function readLockState(home: string, name: string): LockState {
  const file = lockStateFile(home, name)
  const state = readJsonFile<LockState>(file, {schema: LOCK_SCHEMA, maxBytes: MAX_LOCK_FILE_BYTES})
  if (!state)
    return {schema: LOCK_SCHEMA, lock: name, slots: 1, holders: [], queue: [], updated_at: new Date().toISOString()}
  return checkState(file, state)
}

export function writeLockState(home: string, state: LockState): void {
  writeJsonAtomic(lockStateFile(home, state.lock), {...state, updated_at: new Date().toISOString()})
}

/**
 * Run `fn` holding the mutexes of every lock in `names` (taken in sorted
 * order; the caller passes distinct names). `fn` reads and writes their state
 * files; nothing else may change them meanwhile.
 */
export function withLockMutexes<T>(home: string, names: string[], fn: () => T): T {
  const sorted = [...new Set(names)].sort()
  // O_NOFOLLOW guards a file's last part only: a link planted in locks/' place is refused, never written through.
  refuseLinkedDir(locksDir(home))
  makePrivateDir(dirname(lockMutexFile(home, sorted[0] ?? 'x')))
  // A mutex is waited for as any state file lock (30 s, then busy naming the Run whose process keeps
  // it): each holder keeps it for a settle and one write, so a fan-out's crowd passes in seconds, and a
  // try-once `lock acquire` must not hang behind a mutex a Run keeps on purpose (it waited 120 s).
  const take = (index: number): T =>
    index === sorted.length ? fn() : withLockSync(lockMutexFile(home, sorted[index]), () => take(index + 1))
  return take(0)
}
