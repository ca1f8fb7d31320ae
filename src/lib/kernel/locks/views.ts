/** What lock commands print: one lock's capacity, holders and queue, the same in every reply. */
import type {LockState} from '../../base/records/lock.js'

export interface HolderView {
  holder: string
  kind: 'run' | 'process' | 'named'
  since: string
  lease_expires_at: string | null
}

export interface WaiterView {
  holder: string
  since: string
  /** The process waiting for the slot. */
  waiter_pid: number
  /** Other locks this waiter takes together with this one (a Run's `locks`). */
  together: string[] | null
}

export interface LockView {
  lock: string
  /** Capacity. */
  slots: number
  /** Slots taken. */
  held: number
  holders: HolderView[]
  /** Waiters in the order they are served. */
  queue: WaiterView[]
}

export function lockView(state: LockState): LockView {
  return {
    lock: state.lock,
    slots: state.slots,
    held: state.holders.length,
    holders: state.holders.map((e) => ({
      holder: e.label,
      kind: e.holder.kind,
      since: e.since,
      lease_expires_at: e.lease_expires_at ?? null,
    })),
    queue: state.queue.map((e) => ({
      holder: e.label,
      since: e.since,
      waiter_pid: e.waiter.pid,
      together: e.together ?? null,
    })),
  }
}
