/**
 * The lock operations on state files: take (all of a request's locks
 * together, or join their queues), leave the queues, release, renew, settle.
 * Each runs under the mutexes of the locks it touches, settles them first
 * (liveness.ts: dead holders, expired leases and dead waiters go), then
 * decides. Grants are made by the requester itself: a waiter is served when
 * it stands within the free slots at the head of every queue it is in, so
 * FIFO holds per lock, and since all of a request's queue places are taken in
 * one critical section, the queues agree on order and no two requests can
 * each wait for the other (no deadlock for `a,b` against `b,a`).
 *
 * This module writes the journal but no Trace (trace.ts would import the
 * Run-end follow-ups that use this module): callers get the Trace events to
 * append as `traces` (see ops.ts).
 */
import {notActiveError, refusedError, usageError} from '../../base/platform/errors.js'
import type {ProcessIdentity} from '../../base/platform/process-identity.js'
import {appendLockJournal, type JournalRecord} from './journal.js'
import {holderRunDir, settleLockState, type Departure} from './liveness.js'
import {readLockState, withLockMutexes, writeLockState} from './store.js'
import {
  holderLabel,
  sameHolder,
  type HolderEntry,
  type HolderRef,
  type LockSpec,
  type LockState,
} from '../../base/records/lock.js'

/** Who asks, and for how long a grant lasts. */
export interface LockRequest {
  holder: HolderRef
  /** The process making the request (and waiting, when it queues). */
  waiter: ProcessIdentity
  lease_ms?: number
}

/** A Trace event to append to a Run holder's Trace once the mutexes are released. */
export interface LockTrace {
  state_dir: string
  run_instance_id: string
  kind: 'lock.waiting' | 'lock.acquired' | 'lock.released' | 'lock.expired'
  summary: string
  data: Record<string, unknown>
}

export interface Changes {
  /** The state root: a Run holder's Trace is found from its Run id under it. */
  home: string
  journal: Array<Omit<JournalRecord, 'ts'>>
  traces: LockTrace[]
}

export interface TakeOutcome {
  granted: boolean
  /** The holder already held every lock before this request. */
  already: boolean
  /** Names whose slot is not (yet) this requester's. */
  blocked: string[]
  states: LockState[]
  traces: LockTrace[]
}

function noteTrace(
  changes: Changes,
  holder: HolderRef,
  kind: LockTrace['kind'],
  lock: string,
  summary: string,
  data: Record<string, unknown> = {},
): void {
  if (holder.kind !== 'run') return
  // The Run's own dir, never the recorded state_dir (a Run could name any dir for the kernel to write to).
  const dir = holderRunDir(changes.home, holder)
  if (dir === undefined) return
  changes.traces.push({
    state_dir: dir,
    run_instance_id: holder.run_instance_id,
    kind,
    summary,
    data: {lock, ...data},
  })
}

/** Journal what settling removed; Trace the expiries (a freed holder's Run is over: nothing more goes to its Trace). */
function noteDepartures(changes: Changes, lock: string, departures: Departure[]): void {
  for (const gone of departures) {
    changes.journal.push({op: gone.op, lock, holder: gone.entry.label})
    if (gone.op === 'expired')
      noteTrace(changes, gone.entry.holder, 'lock.expired', lock, `lease on lock ${lock} expired`, {
        lease_expires_at: gone.entry.lease_expires_at,
      })
  }
}

/**
 * Read, settle and hand the states of `names` to `decide` under their
 * mutexes; write back those `decide` (or settling) changed, journal the
 * changes. Returns decide's value and the Trace events to append.
 */
function mutate<T>(
  home: string,
  names: string[],
  decide: (states: Map<string, LockState>, changes: Changes, dirty: Set<string>) => T,
): {value: T; traces: LockTrace[]} {
  const changes: Changes = {home, journal: [], traces: []}
  const value = withLockMutexes(home, names, () => {
    const states = new Map<string, LockState>()
    const dirty = new Set<string>()
    for (const name of names) {
      const state = readLockState(home, name)
      const departures = settleLockState(home, state)
      if (departures.length > 0) dirty.add(name)
      noteDepartures(changes, name, departures)
      states.set(name, state)
    }
    const result = decide(states, changes, dirty)
    for (const name of dirty) writeLockState(home, states.get(name)!)
    appendLockJournal(home, changes.journal)
    return result
  })
  return {value, traces: changes.traces}
}

/** Index of the holder's place in the queue, or -1. */
function queueIndex(state: LockState, holder: HolderRef): number {
  return state.queue.findIndex((entry) => sameHolder(entry.holder, holder))
}

function holdsSlot(state: LockState, holder: HolderRef): boolean {
  return state.holders.some((entry) => sameHolder(entry.holder, holder))
}

/**
 * Take every lock of `specs` for the request, together or not at all. When
 * they are not all available: with `queue`, join (or keep) a place in each
 * lock's queue; without, change nothing (busy). Capacity: the first request
 * on an idle lock sets it (a mutex unless `slots` is given); a request that
 * names another capacity than the lock has while in use is refused (exit 5).
 */
export function takeLocks(home: string, specs: LockSpec[], request: LockRequest, queue: boolean): TakeOutcome {
  const names = specs.map((s) => s.name)
  if (new Set(names).size !== names.length)
    throw usageError(`lock ${names.find((n, i) => names.indexOf(n) !== i)} is listed twice`, 'list each lock once')
  const {value, traces} = mutate(home, names, (states, changes, dirty) => {
    const {blocked, already} = blockedLocks(states, specs, request, dirty)
    if (blocked.length === 0) grantAll(states, specs, request, changes, dirty)
    else if (queue) joinQueues(states, specs, request, changes, dirty)
    return {
      granted: blocked.length === 0,
      already: blocked.length === 0 && already,
      blocked,
      states: names.map((n) => states.get(n)!),
    }
  })
  return {...value, traces}
}

type LockStates = Map<string, LockState>

/**
 * The locks of `specs` the holder cannot take now (its place in the queue is
 * past the free slots), and whether it holds every one already. An idle lock
 * takes the request's slots; a busy one refuses other slots (exit 5).
 */
function blockedLocks(
  states: LockStates,
  specs: LockSpec[],
  request: LockRequest,
  dirty: Set<string>,
): {blocked: string[]; already: boolean} {
  const blocked: string[] = []
  let already = true
  for (const spec of specs) {
    const state = states.get(spec.name)!
    if (holdsSlot(state, request.holder)) continue
    already = false
    let place = queueIndex(state, request.holder)
    if (place === -1) {
      place = state.queue.length
      const idle = state.holders.length === 0 && state.queue.length === 0
      if (idle && state.slots !== (spec.slots ?? 1)) {
        state.slots = spec.slots ?? 1
        dirty.add(spec.name)
      } else if (!idle && spec.slots !== undefined && spec.slots !== state.slots) {
        throw refusedError(
          `lock ${spec.name} has ${state.slots} slot(s) but this request asks for ${spec.slots}`,
          `use --slots ${state.slots} (or the same slots in the Recipe) while it is in use, or wait until it is idle`,
          {lock: spec.name, slots: state.slots, requested_slots: spec.slots},
        )
      }
    }
    if (place >= state.slots - state.holders.length) blocked.push(spec.name)
  }
  return {blocked, already}
}

/** Make the holder a holder of every lock of `specs` it does not hold yet (leaving their queues). */
function grantAll(
  states: LockStates,
  specs: LockSpec[],
  request: LockRequest,
  changes: Changes,
  dirty: Set<string>,
): void {
  const label = holderLabel(request.holder)
  const since = new Date().toISOString()
  for (const spec of specs) {
    const state = states.get(spec.name)!
    if (holdsSlot(state, request.holder)) continue
    const place = queueIndex(state, request.holder)
    if (place !== -1) state.queue.splice(place, 1)
    const entry: HolderEntry = {holder: request.holder, label, since}
    if (request.lease_ms !== undefined) {
      entry.lease_ms = request.lease_ms
      entry.lease_expires_at = new Date(Date.now() + request.lease_ms).toISOString()
    }
    state.holders.push(entry)
    dirty.add(spec.name)
    changes.journal.push({
      op: 'acquired',
      lock: spec.name,
      holder: label,
      slots: state.slots,
      held: state.holders.length,
    })
    noteTrace(
      changes,
      request.holder,
      'lock.acquired',
      spec.name,
      `holds lock ${spec.name} (${state.holders.length}/${state.slots})`,
      {
        slots: state.slots,
        held: state.holders.length,
      },
    )
  }
}

/** Queue the holder for every lock of `specs` it neither holds nor waits for (all together: `together`). */
function joinQueues(
  states: LockStates,
  specs: LockSpec[],
  request: LockRequest,
  changes: Changes,
  dirty: Set<string>,
): void {
  const label = holderLabel(request.holder)
  const names = specs.map((s) => s.name)
  for (const spec of specs) {
    const state = states.get(spec.name)!
    if (holdsSlot(state, request.holder) || queueIndex(state, request.holder) !== -1) continue
    state.queue.push({
      holder: request.holder,
      label,
      waiter: request.waiter,
      since: new Date().toISOString(),
      ...(request.lease_ms !== undefined ? {lease_ms: request.lease_ms} : {}),
      ...(specs.length > 1 ? {together: names} : {}),
    })
    dirty.add(spec.name)
    changes.journal.push({op: 'waiting', lock: spec.name, holder: label, position: state.queue.length})
    noteTrace(
      changes,
      request.holder,
      'lock.waiting',
      spec.name,
      `waits for lock ${spec.name} (place ${state.queue.length} in its queue)`,
      {
        position: state.queue.length,
        together: names,
      },
    )
  }
}

/** Leave the queues of `names` (a waiter that gives up). Returns whether the holder holds all of them after all. */
export function leaveQueues(
  home: string,
  names: string[],
  holder: HolderRef,
): {holdsAll: boolean; traces: LockTrace[]} {
  const {value, traces} = mutate(home, names, (states, changes, dirty) => {
    let holdsAll = true
    for (const [name, state] of states) {
      const place = queueIndex(state, holder)
      if (place !== -1) {
        changes.journal.push({op: 'left', lock: name, holder: state.queue[place].label})
        state.queue.splice(place, 1)
        dirty.add(name)
      }
      if (!holdsSlot(state, holder)) holdsAll = false
    }
    return holdsAll
  })
  return {holdsAll: value, traces}
}

/**
 * Release the holder's slot in each of `names` (and any queue place it kept).
 * `strict`: a lock it neither holds nor waits for is an error (exit 3);
 * otherwise skipped. Returns the states after the release, the locks whose
 * slot was released and those whose queue it left (a waiter that will never
 * take its turn, a planted one among them, is removed this way).
 */
export function releaseLocks(
  home: string,
  names: string[],
  holder: HolderRef,
  options: {strict: boolean; reason?: string},
): {states: LockState[]; released: string[]; left: string[]; traces: LockTrace[]} {
  const {value, traces} = mutate(home, names, (states, changes, dirty) => {
    const released: string[] = []
    const left: string[] = []
    for (const [name, state] of states) {
      const index = state.holders.findIndex((entry) => sameHolder(entry.holder, holder))
      const place = queueIndex(state, holder)
      if (place !== -1) {
        changes.journal.push({op: 'left', lock: name, holder: state.queue[place].label})
        state.queue.splice(place, 1)
        dirty.add(name)
        left.push(name)
      }
      if (index === -1) {
        if (options.strict && place === -1) {
          throw notActiveError(
            `${holderLabel(holder)} does not hold lock ${name}`,
            `see who does: actors lock status ${name}`,
            {
              lock: name,
              holder: holderLabel(holder),
            },
          )
        }
        continue
      }
      const [entry] = state.holders.splice(index, 1)
      dirty.add(name)
      released.push(name)
      changes.journal.push({
        op: 'released',
        lock: name,
        holder: entry.label,
        ...(options.reason ? {reason: options.reason} : {}),
      })
      noteTrace(changes, holder, 'lock.released', name, `released lock ${name}`, {
        held_ms: Date.now() - Date.parse(entry.since),
      })
    }
    return {states: names.map((n) => states.get(n)!), released, left}
  })
  return {...value, traces}
}

/** Extend the holder's lease on `name` by `leaseMs` (default: its current lease length) from now. */
export function renewLock(
  home: string,
  name: string,
  holder: HolderRef,
  leaseMs: number | undefined,
): {state: LockState; traces: LockTrace[]} {
  const {value, traces} = mutate(home, [name], (states, changes, dirty) => {
    const state = states.get(name)!
    const entry = state.holders.find((e) => sameHolder(e.holder, holder))
    if (!entry)
      throw notActiveError(
        `${holderLabel(holder)} does not hold lock ${name} (never taken, released, or its lease expired)`,
        `take it again: actors lock acquire ${name}`,
        {lock: name},
      )
    const lease = leaseMs ?? entry.lease_ms
    if (lease === undefined)
      throw usageError(
        `${entry.label} holds lock ${name} without a lease; there is nothing to renew`,
        'pass --lease DURATION to give it one',
      )
    entry.lease_ms = lease
    entry.lease_expires_at = new Date(Date.now() + lease).toISOString()
    dirty.add(name)
    changes.journal.push({op: 'renewed', lock: name, holder: entry.label, lease_expires_at: entry.lease_expires_at})
    return state
  })
  return {state: value, traces}
}

/** Settle lock `name` (a lock operation: dead holders lose their slots now) and return its state. */
export function settleLock(home: string, name: string): {state: LockState; traces: LockTrace[]} {
  const {value, traces} = mutate(home, [name], (states) => states.get(name)!)
  return {state: value, traces}
}
