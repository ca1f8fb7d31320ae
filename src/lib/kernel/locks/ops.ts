/**
 * The services behind `actors lock ...`: who the caller is as a holder, and
 * acquire, release, renew and status with their replies. Trace events for
 * Run holders are appended here, after the lock mutexes are released.
 */
import {readdirSync} from 'node:fs'
import {join} from 'node:path'
import {readJsonFile} from '../../base/platform/state-files.js'
import {ActorsError, EXIT, refusedError, usageError} from '../../base/platform/errors.js'
import {readProcessIdentity, type ProcessIdentity} from '../../base/platform/process-identity.js'
import {unitOfCaller} from '../runs/lineage.js'
import {appendTraceEvent} from '../runs/trace.js'
import {releaseLocks, renewLock, settleLock, takeLocks, type LockRequest, type LockTrace} from './core.js'
import {lockView, type LockView} from './views.js'
import {waitForLocks} from './wait.js'
import {readLockState} from './store.js'
import {
  holderLabel,
  isLockName,
  locksDir,
  lockStateFile,
  sameHolder,
  validateHolderId,
  validateLockName,
  type HolderRef,
  type LockSpec,
  type LockState,
} from '../../base/records/lock.js'

/**
 * Append lock events to their Run holders' Traces; a Run that is gone or
 * damaged is skipped, and so is a dir whose run.json is another instance's
 * (a record in locks/ naming a Run id with an instance it never had).
 */
export function appendLockTraces(traces: LockTrace[]): void {
  for (const t of traces) {
    try {
      const meta = readJsonFile<{run_instance_id?: unknown}>(join(t.state_dir, 'run.json'))
      if (meta?.run_instance_id !== t.run_instance_id) continue
      appendTraceEvent(t.state_dir, {
        kind: t.kind,
        summary: t.summary,
        data: t.data,
        run_instance_id: t.run_instance_id,
      })
    } catch {}
  }
}

/** This process's identity (the waiter of every request it makes). */
export function selfIdentity(): ProcessIdentity {
  const identity = readProcessIdentity(process.pid)
  if (!identity)
    throw new ActorsError(
      "cannot read this process's identity from /proc or ps",
      EXIT.failed,
      'lock holders need process identities; run on Linux or a system with ps',
    )
  return identity
}

/**
 * The holder a lock command acts for: `--holder ID` (a named holder); else
 * the current Run, when called inside one; else the calling process, which is
 * the shell (or script) that ran `actors`, by its process identity.
 */
export function callerHolder(home: string, holderId: string | undefined): HolderRef {
  if (holderId !== undefined) return {kind: 'named', id: validateHolderId(holderId)}
  // Inside a Run's unit that Run holds, whatever the environment says: a process that named another Run
  // there held as that Run, past its own Run's end, and a busy answer blamed the other one (exit 5 instead).
  const unit = unitOfCaller(home, process.env, 'holding a lock as a Run', {foreignUnitIsOutside: true})
  if (unit) return {kind: 'run', run: unit.run, run_instance_id: unit.run_instance_id, state_dir: unit.state_dir}
  const {ACTORS_RUN: run, ACTORS_RUN_INSTANCE: instance, ACTORS_STATE_DIR: stateDir} = process.env
  if (run && instance && stateDir) return {kind: 'run', run, run_instance_id: instance, state_dir: stateDir}
  const parent = readProcessIdentity(process.ppid)
  if (!parent)
    throw new ActorsError(
      `the calling process (pid ${process.ppid}) is gone`,
      EXIT.failed,
      'run actors from a live shell or script, or pass --holder ID --lease DURATION',
    )
  return {kind: 'process', ...parent}
}

/**
 * The holder `release` and `renew` act for: as callerHolder, with one more
 * case. The process that took the slot may have become this `actors` by
 * exec: bash and dash run the last command of `sh -c 'acquire; release'` in
 * their own place, as do `exec actors ...` and make's one-line recipes. A
 * process keeps its pid and start time across exec, so a process holder with
 * this process's own identity is the caller, and pid reuse cannot fake it.
 */
export function callerHolderOfLock(home: string, name: string, holderId: string | undefined): HolderRef {
  const caller = callerHolder(home, holderId)
  if (caller.kind !== 'process') return caller
  const held = readLockState(home, validateLockName(name)).holders
  if (held.some((e) => sameHolder(e.holder, caller))) return caller
  const self = readProcessIdentity(process.pid)
  const asSelf: HolderRef | undefined = self && {kind: 'process', ...self}
  return asSelf && held.some((e) => sameHolder(e.holder, asSelf)) ? asSelf : caller
}

export interface AcquireOptions {
  name: string
  slots?: number
  leaseMs?: number
  /** Undefined: do not wait (busy is exit 5). */
  waitMs?: number
  holder: HolderRef
  /** Checked on every wake while waiting: true gives up (the waiter leaves the queue; reported as the timeout). */
  stop?: () => boolean
}

export interface AcquireReply extends LockView {
  holder: string
  lease_expires_at: string | null
  /** The holder already held the slot (nothing new was taken). */
  already: boolean
  waited_ms: number
}

function replyFor(state: LockState, holder: HolderRef, already: boolean, started: number): AcquireReply {
  const mine = state.holders.find((e) => sameHolder(e.holder, holder))
  return {
    ...lockView(state),
    holder: holderLabel(holder),
    lease_expires_at: mine?.lease_expires_at ?? null,
    already,
    waited_ms: Date.now() - started,
  }
}

/** Take a slot of one lock now (busy: exit 5) or, with `waitMs`, queue for it (ran out: exit 124). */
export async function acquireLock(home: string, options: AcquireOptions): Promise<AcquireReply> {
  const name = validateLockName(options.name)
  if (options.holder.kind === 'named' && options.leaseMs === undefined)
    throw usageError(
      '--holder needs --lease',
      'a named holder has no process to watch: give it a lease, e.g. --holder ci-7 --lease 10m (and renew it)',
    )
  const started = Date.now()
  const spec: LockSpec = {name, slots: options.slots}
  const request: LockRequest = {holder: options.holder, waiter: selfIdentity(), lease_ms: options.leaseMs}
  if (options.waitMs === undefined) {
    const outcome = takeLocks(home, [spec], request, false)
    appendLockTraces(outcome.traces)
    const view = lockView(outcome.states[0])
    if (!outcome.granted) {
      throw refusedError(
        `lock ${name} is busy (${view.held}/${view.slots} held by ${view.holders.map((h) => h.holder).join(', ')}${view.queue.length ? `; ${view.queue.length} waiting` : ''})`,
        `wait for it: actors lock acquire ${name} --wait 5m`,
        {...view},
      )
    }
    return replyFor(outcome.states[0], options.holder, outcome.already, started)
  }
  const waited = await waitForLocks(home, [spec], request, {
    deadline: started + options.waitMs,
    stop: options.stop,
    onTraces: appendLockTraces,
  })
  if (waited.status !== 'granted') {
    const view = lockView(settleLock(home, name).state)
    throw new ActorsError(
      `lock ${name} was not free within ${options.waitMs} ms (${view.held}/${view.slots} held by ${view.holders.map((h) => h.holder).join(', ') || 'nobody'})`,
      EXIT.timeout,
      'wait longer (--wait), or see who holds it: actors lock status ' + name,
      {...view},
    )
  }
  return replyFor(waited.outcome.states[0], options.holder, waited.outcome.already, started)
}

/** Release the caller's slot of lock `name`, or its place in the queue (neither: exit 3). */
export function releaseLock(
  home: string,
  name: string,
  holder: HolderRef,
): LockView & {holder: string; released: boolean; left_queue: boolean} {
  const outcome = releaseLocks(home, [validateLockName(name)], holder, {strict: true})
  appendLockTraces(outcome.traces)
  return {
    ...lockView(outcome.states[0]),
    holder: holderLabel(holder),
    released: outcome.released.length > 0,
    left_queue: outcome.left.length > 0,
  }
}

/** Renew the caller's lease on lock `name` (not held or already expired: exit 3). */
export function renewLockLease(
  home: string,
  name: string,
  holder: HolderRef,
  leaseMs: number | undefined,
): AcquireReply {
  const outcome = renewLock(home, validateLockName(name), holder, leaseMs)
  appendLockTraces(outcome.traces)
  return replyFor(outcome.state, holder, true, Date.now())
}

/** Names of every lock that has a state file. */
export function listLockNames(home: string): string[] {
  let files: string[]
  try {
    files = readdirSync(locksDir(home))
  } catch {
    return []
  }
  return files
    .filter((f) => f.endsWith('.json'))
    .map((f) => f.slice(0, -'.json'.length))
    .filter(isLockName)
    .sort()
}

/** A lock whose state file could not be read (corrupt, oversized, a link...): listed apart, never guessed at. */
export interface DamagedLock {
  lock: string
  file: string
  error: string
  fix: string
}

/** `lock status` without a name: every lock, the damaged ones apart. */
export interface LockListing {
  locks: LockView[]
  damaged: DamagedLock[]
}

/**
 * The settled state of one lock, or of every lock (a lock operation: dead
 * holders lose their slots now). In the listing a damaged lock is named with
 * its error and fix and the others are listed: a Run can write any lock file
 * (one over 256 KiB made the listing of every lock fail); one lock by name
 * still fails with its error.
 */
export function lockStatus(home: string, name?: string): LockView | LockListing {
  const view = (n: string) => {
    const outcome = settleLock(home, n)
    appendLockTraces(outcome.traces)
    return lockView(outcome.state)
  }
  if (name !== undefined) return view(validateLockName(name))
  const listing: LockListing = {locks: [], damaged: []}
  for (const lock of listLockNames(home)) {
    try {
      listing.locks.push(view(lock))
    } catch (error) {
      // Only a lock's own damage (exit 1, naming its file); busy mutexes and the like still fail the command.
      if (!(error instanceof ActorsError) || error.exitCode !== EXIT.failed) throw error
      const fix = error.fix ?? 'inspect or remove the file by hand'
      listing.damaged.push({lock, file: lockStateFile(home, lock), error: error.message, fix})
    }
  }
  return listing
}
