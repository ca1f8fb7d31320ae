/**
 * Waiting for locks without polling: the waiter sleeps on the state root's
 * locks directory (every change to a lock is an atomic rename there) through
 * the kernel's Doorbell, plus any other directories the caller cares about (a
 * supervisor watches its own state dir for a stop). On each ring it first
 * reads the lock files without their mutexes and only takes them when it may
 * be its turn, so a crowd of waiters costs reads, not mutex traffic. A slow
 * safety re-check catches what rings nobody: a holder process that died.
 */
import {makePrivateDir} from '../../base/platform/private-files.js'
import {Doorbell} from '../../base/bell/doorbell.js'
import {leaseExpired, nextExpiry, settleLockState} from './liveness.js'
import {leaveQueues, takeLocks, type LockRequest, type LockTrace, type TakeOutcome} from './core.js'
import {readLockState} from './store.js'
import {locksDir, sameHolder, type LockSpec} from '../../base/records/lock.js'

/** How often a waiter re-checks even when nothing rang (a holder process may have died silently). */
export const LOCK_SAFETY_POLL_MS = 1000

export interface WaitOptions {
  /** Give up at this time (ms since the epoch); Infinity waits for ever. */
  deadline: number
  /** Also wake on changes in these directories. */
  watch?: string[]
  /** Checked on every wake: true ends the wait (the waiter leaves the queues). */
  stop?: () => boolean
  /** Called with every batch of Trace events the attempts produced. */
  onTraces?: (traces: LockTrace[]) => void
  /** Called after each attempt that did not grant (e.g. to publish what is still blocked). */
  onBlocked?: (blocked: string[]) => void
}

export type WaitOutcome = {status: 'granted'; outcome: TakeOutcome} | {status: 'timeout' | 'stopped'}

/**
 * Read without mutexes whether the request might be served now, and when a
 * lease runs out next. A wrong "maybe" only costs one locked attempt. `full`
 * also checks that holders and waiters ahead are alive (a /proc read each):
 * done on the safety re-check, since a death rings nobody, while a ring means
 * a lock operation, which settled the lock already.
 */
function peek(home: string, specs: LockSpec[], request: LockRequest, full: boolean): {maybe: boolean; wakeAt: number} {
  let maybe = true
  let wakeAt = Infinity
  const now = Date.now()
  for (const spec of specs) {
    let state
    try {
      state = readLockState(home, spec.name)
    } catch {
      return {maybe: true, wakeAt} // let the locked attempt report the damaged file
    }
    wakeAt = Math.min(wakeAt, nextExpiry(state))
    if (state.holders.some((e) => sameHolder(e.holder, request.holder) && !leaseExpired(e, now))) continue
    if (full) settleLockState(home, state, now)
    else state.holders = state.holders.filter((e) => !leaseExpired(e, now))
    const place = state.queue.findIndex((e) => sameHolder(e.holder, request.holder))
    if ((place === -1 ? state.queue.length : place) >= state.slots - state.holders.length) maybe = false
  }
  return {maybe, wakeAt}
}

/**
 * Take every lock of `specs` for `request`, queueing for them until they are
 * all free for it (FIFO), the deadline passes or `stop` says so; a waiter
 * that gives up leaves every queue.
 */
export async function waitForLocks(
  home: string,
  specs: LockSpec[],
  request: LockRequest,
  options: WaitOptions,
): Promise<WaitOutcome> {
  makePrivateDir(locksDir(home))
  const bells = [locksDir(home), ...(options.watch ?? [])].map((dir) => new Doorbell(dir, LOCK_SAFETY_POLL_MS))
  const names = specs.map((s) => s.name)
  let attempt = true
  let lastBlocked = ''
  let lastFull = Date.now()
  try {
    for (;;) {
      for (const bell of bells) bell.clear()
      if (options.stop?.()) {
        options.onTraces?.(leaveQueues(home, names, request.holder).traces)
        return {status: 'stopped'}
      }
      let wakeAt = Infinity
      if (!attempt) {
        const full = Date.now() - lastFull >= LOCK_SAFETY_POLL_MS
        if (full) lastFull = Date.now()
        const seen = peek(home, specs, request, full)
        attempt = seen.maybe
        wakeAt = seen.wakeAt
      }
      if (attempt) {
        const outcome = takeLocks(home, specs, request, true)
        options.onTraces?.(outcome.traces)
        if (outcome.granted) return {status: 'granted', outcome}
        wakeAt = Math.min(...outcome.states.map(nextExpiry))
        const blocked = outcome.blocked.join(',')
        if (blocked !== lastBlocked) options.onBlocked?.(outcome.blocked)
        lastBlocked = blocked
        attempt = false
      }
      if (Date.now() >= options.deadline) {
        options.onTraces?.(leaveQueues(home, names, request.holder).traces)
        return {status: 'timeout'}
      }
      const round = new AbortController()
      const until = Math.min(options.deadline, wakeAt + 5)
      await Promise.race(bells.map((bell) => bell.next(until, round.signal)))
      round.abort()
    }
  } finally {
    for (const bell of bells) bell.close()
  }
}
