/**
 * The shapes of resource locks (SPEC: Resource locks): one state file per
 * lock, `$ACTORS_HOME/locks/<name>.json`, holding its capacity in slots, the
 * holders (one slot each) and the FIFO queue of waiters.
 */
import {join} from 'node:path'
import {usageError} from '../platform/errors.js'
import type {ProcessIdentity} from '../platform/process-identity.js'

export const LOCK_SCHEMA = 'actors-lock-v1'
const LOCK_NAME = /^[A-Za-z0-9_.:-]+$/
/** Longest lock name (the file name `<name>.json` must stay well below 255 bytes). */
const MAX_NAME_LENGTH = 128

/** Who holds a slot: a Run (by instance), a process (by identity, never a bare pid), or a named holder with a lease. */
export type HolderRef =
  | {kind: 'run'; run: string; run_instance_id: string; state_dir: string}
  | ({kind: 'process'; unit?: unknown} & ProcessIdentity)
  | {kind: 'named'; id: string}

export interface HolderEntry {
  holder: HolderRef
  /** Short readable name: `run:ID`, `pid:PID` or the named holder's id. */
  label: string
  since: string
  lease_ms?: number
  lease_expires_at?: string
}

export interface WaiterEntry {
  holder: HolderRef
  label: string
  /** The process doing the waiting (a supervisor, a `lock acquire --wait`): when it dies, the entry leaves the queue. */
  waiter: ProcessIdentity
  since: string
  /** Lease the holder will get once granted. */
  lease_ms?: number
  /** Every lock this waiter takes together (a Run's `locks`), this one included. */
  together?: string[]
}

export interface LockState {
  schema: typeof LOCK_SCHEMA
  lock: string
  slots: number
  holders: HolderEntry[]
  queue: WaiterEntry[]
  updated_at: string
}

/** One lock a request wants; `slots` undefined: no opinion on capacity (a mutex when the lock is idle). */
export interface LockSpec {
  name: string
  slots?: number
}

/** Whether `name` is a valid lock name (it becomes a file name). */
export function isLockName(name: string): boolean {
  return LOCK_NAME.test(name) && name.length <= MAX_NAME_LENGTH && name !== '.' && name !== '..'
}

/** Refuse a lock name that is not `^[A-Za-z0-9_.:-]+$` (exit 2). */
export function validateLockName(name: string): string {
  if (!isLockName(name)) {
    throw usageError(
      `lock name ${JSON.stringify(name.length > 80 ? name.slice(0, 80) + '…' : name)} is not valid`,
      `use letters, digits, "_", ".", ":" and "-" only (at most ${MAX_NAME_LENGTH} characters), e.g. repo or gpu:0`,
    )
  }
  return name
}

export function locksDir(home: string): string {
  return join(home, 'locks')
}

export function lockStateFile(home: string, name: string): string {
  return join(locksDir(home), `${name}.json`)
}

/**
 * The mutex files live in a subdirectory so that taking one (create, unlink)
 * does not wake every waiter watching the locks directory itself.
 */
export function lockMutexFile(home: string, name: string): string {
  return join(locksDir(home), '.mutex', `${name}.lock`)
}

export function journalFile(home: string): string {
  return join(locksDir(home), 'journal.jsonl')
}

/** The readable label of a holder. */
export function holderLabel(holder: HolderRef): string {
  if (holder.kind === 'run') return `run:${holder.run}`
  if (holder.kind === 'process') return `pid:${holder.pid}`
  return holder.id
}

/** Whether two refs name the same holder (a Run's instance, a process's identity, a name). */
export function sameHolder(a: HolderRef, b: HolderRef): boolean {
  if (a.kind === 'run' && b.kind === 'run') return a.run_instance_id === b.run_instance_id
  if (a.kind === 'process' && b.kind === 'process')
    return a.pid === b.pid && a.start === b.start && (a.boot ?? '') === (b.boot ?? '')
  if (a.kind === 'named' && b.kind === 'named') return a.id === b.id
  return false
}

/** A named holder's id: a lock-name-like word that cannot be mistaken for a Run or a pid label. */
export function validateHolderId(id: string): string {
  if (!LOCK_NAME.test(id) || id.length > MAX_NAME_LENGTH || /^(run|pid):/.test(id)) {
    throw usageError(
      `holder id ${JSON.stringify(id)} is not valid`,
      'use letters, digits, "_", ".", ":" and "-" (not starting with run: or pid:), e.g. ci-job-7',
    )
  }
  return id
}
