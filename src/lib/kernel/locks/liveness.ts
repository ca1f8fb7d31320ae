/**
 * Whether holders and waiters are still there, checked lazily at every lock
 * operation so that correctness never depends on a clean-up hook having run:
 * a Run holder is gone once its Run is terminal (or its supervisor vanished
 * and nothing of its unit is left, nor a plan that goes on), a process holder once its
 * identity no longer matches a live process, any holder once its lease ran
 * out; a waiter is gone once its waiting process died.
 */
import {join} from 'node:path'
import {bootId, isSameProcess, type ProcessIdentity} from '../../base/platform/process-identity.js'
import {RUN_SCHEMA, isTerminal, type RunMeta} from '../../base/records/run.js'
import {readJsonFile} from '../../base/platform/state-files.js'
import {recordedRunUnit, runsOnThisMachine} from '../containment/lost.js'
import {afterRecordedEnd, recordedAttemptEnd} from '../containment/end-record.js'
import {killUnitSync, openUnit} from '../containment/index.js'
import {nodeOs} from '../../base/platform/builtins.js'
import {isPlainName, runDir} from '../../base/platform/home.js'
import type {HolderEntry, HolderRef, LockState, WaiterEntry} from '../../base/records/lock.js'

/**
 * The state dir of a Run holder, from its Run id alone, or undefined when
 * the id is none a Run can have. Never the record's `state_dir`: locks/ is
 * writable by any Run, and a recorded path would let one decide whose unit
 * the kernel ends as lost and where it appends Trace events.
 */
export function holderRunDir(home: string, ref: Extract<HolderRef, {kind: 'run'}>): string | undefined {
  return typeof ref.run === 'string' && isPlainName(ref.run) ? runDir(home, ref.run) : undefined
}

/**
 * True while the Run instance `ref` names is live. Reads run.json and
 * result.json directly, without run-store's reconciliation: that would call
 * back into lock release (a Run-end follow-up) while a lock's mutex is held,
 * and run-store imports the Run-end follow-ups, this module among them.
 * A damaged run.json counts as live: fail closed. A holder with no valid Run
 * id, or whose Run's dir holds another instance, is gone: its slot is freed
 * and no Run is acted on.
 */
function runIsLive(home: string, ref: Extract<HolderRef, {kind: 'run'}>): boolean {
  const dir = holderRunDir(home, ref)
  if (dir === undefined) return false
  try {
    const meta = readJsonFile<RunMeta>(join(dir, 'run.json'), {schema: RUN_SCHEMA})
    if (!meta || meta.run_instance_id !== ref.run_instance_id || isTerminal(meta.status)) return false
    const result = readJsonFile<{run_instance_id?: string}>(join(dir, 'result.json'))
    if (result && (result.run_instance_id === undefined || result.run_instance_id === ref.run_instance_id)) return false
    // A supervisor that vanished: the Run lives on while anything of its unit does (a reader takes it over,
    // executors/take-over.ts), and while its recorded end says its plan goes on (the next step, another attempt).
    if (meta.process_identity === undefined || isSameProcess(meta.process_identity)) return true
    // Another machine's supervisor is none of ours to judge, unless its unit is seen here: the Run wrote that `host`.
    if (!runsOnThisMachine(meta, dir, nodeOs().hostname())) return false
    if (recordedRunUnit(meta, dir).members().length > 0) return true
    const end = recordedAttemptEnd(meta, dir)
    return end !== undefined && afterRecordedEnd(meta, end) === 'continue'
  } catch {
    return true
  }
}

type Identity = Pick<ProcessIdentity, 'pid' | 'start' | 'boot'>

/**
 * How a `lock exec` unit's name starts: `lock-<holder pid>-<holder start>-<holder boot>-` (then a random id), the
 * holder's whole identity, so the name proves the unit against all of it and never against pid and start alone.
 */
export function lockUnitPrefix(holder: Identity): string {
  const part = (value: unknown) => String(value ?? '').replace(/[^0-9A-Za-z]/g, '')
  return `lock-${holder.pid}-${part(holder.start)}-${part(holder.boot)}-`
}

/**
 * A holder whose identity names another boot (or none, on a machine that has
 * one): nothing it started can live on this boot, so there is no unit of its
 * to end. A record copying a live lock exec's pid, start and unit with another
 * boot id reads as a dead holder; it is dropped, and nothing is killed for it.
 */
function fromThisBoot(holder: Identity): boolean {
  return (holder.boot ?? '') === (bootId() ?? '')
}

/**
 * An identity in the form the kernel writes it: a whole pid and a start of
 * digits only. lockUnitPrefix() keeps only letters and digits, so a record
 * whose start was `<start>.` (which no live process has: the holder reads
 * as dead) would otherwise name the live holder's own unit.
 */
function isCanonical(holder: Identity): boolean {
  // A start of digits as a string, as the kernel reads it (a JSON number reads as dead, yet prints the same digits).
  const start = holder.start as unknown
  return Number.isSafeInteger(holder.pid) && holder.pid > 1 && typeof start === 'string' && /^\d+$/.test(start)
}

/**
 * A `lock exec` that died may have left COMMAND running in its unit
 * ([containment]): end it now; the holder counts as live while anything of
 * the unit cannot be ended. The unit must be the one named after this very
 * holder, its whole identity (its tracked marker or its cgroup's name), and
 * the holder must be of this boot: locks/ is writable by any Run, and a
 * record pairing a dead holder with another lock exec's unit, or with
 * anything else, proves nothing to end, so the slot passes on.
 */
function lostUnitRemains(record: unknown, holder: Identity): boolean {
  if (record === undefined || !fromThisBoot(holder) || !isCanonical(holder)) return false
  const {marker, path} = (record ?? {}) as {marker?: unknown; path?: unknown}
  const named = typeof path === 'string' ? path.slice(path.lastIndexOf('/') + 1) : ''
  const instance = typeof marker === 'string' && marker.startsWith('ACTORS_UNIT=') ? marker.slice(12) : named
  if (!instance.startsWith(lockUnitPrefix(holder))) return false
  const unit = openUnit(record, () => ({rootPids: [], pgids: []}), {unit: instance, file: 'the lock holder record'})
  const left = killUnitSync(unit)
  if (left.length === 0) unit.remove()
  return left.length > 0
}

/** Whether the holder itself (Run, process) still exists; named holders live by their lease alone. */
export function holderExists(home: string, ref: HolderRef): boolean {
  if (ref.kind === 'run') return runIsLive(home, ref)
  if (ref.kind === 'process') return isSameProcess(ref) || lostUnitRemains(ref.unit, ref)
  return true
}

export function leaseExpired(entry: HolderEntry, now: number): boolean {
  return entry.lease_expires_at !== undefined && Date.parse(entry.lease_expires_at) <= now
}

export function waiterExists(home: string, entry: WaiterEntry): boolean {
  return isSameProcess(entry.waiter) && holderExists(home, entry.holder)
}

/** Why an entry left a lock at settle time (journal `op`, and the Trace kind for Run holders). */
export type Departure = {op: 'expired' | 'freed'; entry: HolderEntry} | {op: 'left'; entry: WaiterEntry}

/**
 * Drop expired leases, dead holders and dead waiters from `state` (in place).
 * Returns what left, for the journal and the Traces.
 */
export function settleLockState(home: string, state: LockState, now = Date.now()): Departure[] {
  const gone: Departure[] = []
  state.holders = state.holders.filter((entry) => {
    if (leaseExpired(entry, now)) gone.push({op: 'expired', entry})
    else if (!holderExists(home, entry.holder)) gone.push({op: 'freed', entry})
    else return true
    return false
  })
  state.queue = state.queue.filter((entry) => {
    if (waiterExists(home, entry)) return true
    gone.push({op: 'left', entry})
    return false
  })
  return gone
}

/** The earliest lease expiry among the holders (ms since the epoch), for a waiter's next re-check. */
export function nextExpiry(state: LockState): number {
  let earliest = Infinity
  for (const entry of state.holders)
    if (entry.lease_expires_at) earliest = Math.min(earliest, Date.parse(entry.lease_expires_at))
  return earliest
}
