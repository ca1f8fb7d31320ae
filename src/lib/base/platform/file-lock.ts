/**
 * Cross-process mutual exclusion through an exclusively created lock (a symbolic link)
 * holding the owner's process identity. A lock whose owner is dead (or whose
 * pid was recycled) is stale and is broken; a live owner is waited for.
 */
import {
  closeSync,
  constants,
  lstatSync,
  openSync,
  readFileSync,
  readlinkSync,
  renameSync,
  symlinkSync,
  unlinkSync,
  writeSync,
} from 'node:fs'
import {ActorsError, EXIT} from './errors.js'
import {isSameProcess, readProcessIdentity, type ProcessIdentity} from './process-identity.js'
import {sleep, sleepSync} from './sleep.js'
import {testHookNumber} from './test-hooks.js'

let selfIdentity: ProcessIdentity | undefined

/**
 * The lock files this process holds now. A lock that names this process and
 * is not among them is not held: its dir was renamed while it was (a Run may
 * swap state dirs), or a Run wrote it to stall its own supervisor. Waited
 * for as live, it cost that supervisor 30 s at its end.
 */
const heldHere = new Set<string>()

/**
 * Create the lock with its holder's identity already in it, in one system
 * call: a symbolic link whose target is the identity (symlink() fails with
 * EEXIST when the lock is taken, and a link is never seen half-made). So a
 * holder descheduled for a long while right after taking the lock (a loaded
 * machine) is never mistaken for an abandoned torn write and broken, and a
 * lock costs two system calls (symlink, unlink) instead of the six a
 * temp-file-and-hard-link scheme takes. Lock files of the older kind (regular
 * files holding the identity, made by exclusive create) are still read and
 * broken the same way. File systems without symbolic links fall back to
 * create-then-write.
 */
function tryAcquire(lockFile: string): boolean {
  selfIdentity ??= readProcessIdentity(process.pid) ?? {pid: process.pid, start: 'unknown'}
  const identity = JSON.stringify(selfIdentity)
  try {
    symlinkSync(identity, lockFile)
    heldHere.add(lockFile)
    return true
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'EEXIST') return false
    if (code === 'EPERM' || code === 'ENOTSUP' || code === 'EOPNOTSUPP' || code === 'ENOSYS') {
      const taken = tryCreate(lockFile, identity)
      if (taken) heldHere.add(lockFile)
      return taken
    }
    throw error
  }
}

/** Exclusive create, then write: a short window in which the file is empty (handled as torn by waiters). */
function tryCreate(lockFile: string, identity: string): boolean {
  let fd: number
  try {
    fd = openSync(lockFile, 'wx', 0o600)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false
    throw error
  }
  try {
    writeSync(fd, identity)
  } finally {
    closeSync(fd)
  }
  return true
}

/**
 * What a lock file holds: its holder's identity, or (unreadable: torn) an id
 * of the file itself; `junk` for something no lock ever is (a directory, a
 * FIFO: made by a Run in its own state dir to stall the kernel).
 */
type LockFileState = {holder: ProcessIdentity} | {torn: string} | {junk: true}

/** Read the lock file once per contention step; undefined when there is none. */
function readLockFile(lockFile: string): LockFileState | undefined {
  try {
    // Never opened when it is no file or link: reading a FIFO would block for ever.
    const stat = lstatSync(lockFile)
    if (!stat.isSymbolicLink() && !stat.isFile()) return {junk: true}
  } catch {
    return undefined
  }
  try {
    const holder: unknown = JSON.parse(readLockText(lockFile))
    if (holder && typeof holder === 'object') return {holder: holder as ProcessIdentity}
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
  }
  // An empty or torn lock file: its writer died between create and write, or
  // is writing right now. Identify the file (inode and change time) so that
  // a fresh lock caught mid-write is never taken for an old torn one.
  try {
    const stat = lstatSync(lockFile, {bigint: true})
    return {torn: `${stat.ino}:${stat.ctimeNs}`}
  } catch {
    return undefined
  }
}

/**
 * The identity text a lock holds: a symbolic link's target, or the content of
 * a lock file of the older kind, opened so that it never follows a link nor
 * waits for a writer (a Run may swap its `.lock` for a FIFO at any moment:
 * a blocking read held kill, stop and a supervisor's release for ever).
 */
export function readLockText(lockFile: string): string {
  try {
    return readlinkSync(lockFile)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EINVAL') throw error
  }
  const fd = openSync(lockFile, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK)
  try {
    return readFileSync(fd, 'utf8')
  } finally {
    closeSync(fd)
  }
}

/** Whether `holder` holds the lock: alive (never a lock this process wrote and let go), and one of its takers. */
function holds(lockFile: string, holder: ProcessIdentity, options: LockOptions): boolean {
  if (holder.pid === process.pid) return heldHere.has(lockFile)
  return isSameProcess(holder) && (options.takenOnlyBy?.(holder.pid) ?? true)
}

/** Remove the lock file if its holder is gone. Renaming first makes the break itself race-free. */
function breakIfStale(lockFile: string, holder: ProcessIdentity, options: LockOptions): void {
  if (holds(lockFile, holder, options)) return
  const aside = `${lockFile}.stale.${process.pid}`
  try {
    renameSync(lockFile, aside)
  } catch {
    return
  }
  // Another breaker may have replaced the stale lock with a live one between
  // our read and rename; if what we moved is live, put it back.
  try {
    const moved = JSON.parse(readLockText(aside)) as ProcessIdentity
    if (moved.pid !== process.pid && holds(aside, moved, options)) {
      renameSync(aside, lockFile)
      return
    }
  } catch {}
  try {
    unlinkSync(aside)
  } catch {}
}

/** How long a lock waiter waits by default before answering busy (exit 5). */
const DEFAULT_LOCK_WAIT_MS = 30_000

export interface LockOptions {
  /** Give up after this long (ms). */
  timeoutMs?: number
  /**
   * The processes that ever take this lock, when that is known: a live
   * holder that is none of them did not take it (a Run wrote the lock
   * naming pid 1, which lives for ever), and the lock is broken as stale.
   */
  takenOnlyBy?: (pid: number) => boolean
}

/**
 * What a waiter does after each failed try: break a stale lock, remove one
 * that stayed torn (unreadable) for a second, give up at the deadline.
 * Returns how long to sleep before the next try (backing off to 20 ms).
 */
function contention(lockFile: string, options: LockOptions): () => number {
  // Patient: a crowd of callers on a loaded machine (70 controls of one Run on 2 cores) each wait their turn.
  const waitMs = options.timeoutMs ?? (testHookNumber('lockWaitMs') || DEFAULT_LOCK_WAIT_MS)
  const deadline = Date.now() + waitMs
  let delay = 1
  // The torn file being timed: a different file (a fresh lock caught mid-write) restarts the clock.
  let torn: {file: string; since: number} | undefined
  return () => {
    const state = readLockFile(lockFile)
    if (state && 'holder' in state) breakIfStale(lockFile, state.holder, options)
    if (state && 'junk' in state) moveAside(lockFile)
    if (Date.now() > deadline) throw busyError(lockFile, state, waitMs)
    if (!state || !('torn' in state)) torn = undefined
    else if (torn?.file !== state.torn) torn = {file: state.torn, since: Date.now()}
    else if (Date.now() - torn.since > 1000) {
      // The same file stayed unreadable for a second: an abandoned torn write.
      try {
        unlinkSync(lockFile)
      } catch {}
      torn = undefined
    }
    const wait = delay
    delay = Math.min(delay * 2, 20)
    return wait
  }
}

/** Move what is not a lock out of the lock's place (renamed beside it, never deleted: it may be a whole directory). */
function moveAside(lockFile: string): void {
  try {
    renameSync(lockFile, `${lockFile}.not-a-lock.${process.pid}.${Date.now()}`)
  } catch {}
}

/** Who a lock's holder is, said for a busy error: `what` follows its pid, `fix` replaces the generic one. */
export interface LockHolderNote {
  what: string
  fix: string
}

let describeHolder: (pid: number, lockFile: string) => LockHolderNote | undefined = () => undefined

/**
 * How busy errors name a holder: the kernel's entry points install the
 * containment layer's answer (which Run's cgroup the holder is in), which
 * this layer cannot know by itself.
 */
export function describeLockHoldersWith(describe: (pid: number, lockFile: string) => LockHolderNote | undefined): void {
  describeHolder = describe
}

/**
 * Busy (exit 5, as for any refusal to wait longer), never a failure of the
 * command itself. A holder that is a process of a Run is named with that Run:
 * a Run can keep a lock of the state root it can write, and ending it is the
 * way out.
 */
function busyError(lockFile: string, state: LockFileState | undefined, waitedMs: number): ActorsError {
  const pid = state && 'holder' in state ? state.holder.pid : undefined
  const note = pid === undefined ? undefined : describeHolder(pid, lockFile)
  const holder = pid === undefined ? '' : note ? ` (pid ${pid}, ${note.what})` : ` (pid ${pid})`
  return new ActorsError(
    `busy: another actors process${holder} held ${lockFile} for over ${Math.round(waitedMs / 1000)}s`,
    EXIT.refused,
    note?.fix ?? 'retry; if no actors process is running, remove that file',
    {lock: lockFile},
  )
}

/** Remove the lock, unless what is at its path now is not this process's (its dir was swapped for another's). */
function release(lockFile: string): void {
  heldHere.delete(lockFile)
  try {
    const holder = JSON.parse(readLockText(lockFile)) as ProcessIdentity
    if (holder.pid === process.pid) unlinkSync(lockFile)
  } catch {}
}

/**
 * The longest a synchronous wait may block in this process, when set: a
 * process that serves many callers on one thread (`actors mcp`) answers busy
 * sooner rather than let one Run that keeps a lock stall every other call.
 */
let syncWaitCapMs: number | undefined

/** When every synchronous wait of this process ends at the latest (ms since the epoch), when set. */
let syncWaitDeadline: number | undefined

export function capSyncLockWaits(ms: number | undefined): void {
  syncWaitCapMs = ms
}

/**
 * Run `fn` with this process's synchronous lock waits capped at `ms` at
 * most (an end retried after it removed a lock a Run kept: kept again, it
 * is not waited for in full), and all of them together at `totalMs` when
 * given: an end that takes the locks of a whole tree (one Run kept a lock
 * of each of its children) waits `ms` once, not once per Run. The caps in
 * force before are put back after.
 */
export async function withSyncLockWaitsCapped<T>(ms: number, fn: () => Promise<T>, totalMs?: number): Promise<T> {
  const before = syncWaitCapMs
  const deadlineBefore = syncWaitDeadline
  syncWaitCapMs = Math.min(before ?? ms, ms)
  if (totalMs !== undefined) syncWaitDeadline = Math.min(deadlineBefore ?? Infinity, Date.now() + totalMs)
  try {
    return await fn()
  } finally {
    syncWaitCapMs = before
    syncWaitDeadline = deadlineBefore
  }
}

/** The longest the next synchronous wait may take, `waitMs` or less (the caps above). */
function syncWaitMs(waitMs: number): number {
  const capped = syncWaitCapMs === undefined ? waitMs : Math.min(waitMs, syncWaitCapMs)
  return syncWaitDeadline === undefined ? capped : Math.max(0, Math.min(capped, syncWaitDeadline - Date.now()))
}

/** Run `fn` while holding the lock file `lockFile` (synchronously). Not reentrant. */
export function withLockSync<T>(lockFile: string, fn: () => T, options: LockOptions = {}): T {
  const waitMs = options.timeoutMs ?? (testHookNumber('lockWaitMs') || DEFAULT_LOCK_WAIT_MS)
  const backoff = contention(lockFile, {...options, timeoutMs: syncWaitMs(waitMs)})
  while (!tryAcquire(lockFile)) sleepSync(backoff())
  try {
    return fn()
  } finally {
    release(lockFile)
  }
}

/**
 * Wait, without blocking the event loop, until nobody holds `lockFile` (a
 * stale or junk lock is cleared as a waiter would), then return without taking
 * it: what a single-threaded server does before synchronous work that takes
 * the lock, so its other callers go on meanwhile. Busy (exit 5) at the deadline.
 */
export async function lockFreed(lockFile: string, options: LockOptions = {}): Promise<void> {
  const backoff = contention(lockFile, options)
  while (readLockFile(lockFile) !== undefined) await sleep(backoff())
}

/** Async variant: waits without blocking the event loop; `fn` may be async. */
export async function withLock<T>(lockFile: string, fn: () => Promise<T> | T, options: LockOptions = {}): Promise<T> {
  const backoff = contention(lockFile, options)
  while (!tryAcquire(lockFile)) await sleep(backoff())
  try {
    return await fn()
  } finally {
    release(lockFile)
  }
}
