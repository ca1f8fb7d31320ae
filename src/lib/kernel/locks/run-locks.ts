/**
 * A Run's Recipe `locks`, taken by its supervisor before the command starts:
 * the Run stays `queued` with `waiting_for: [names]` in run.json until it
 * holds all of them together, keeping its place in every queue, and is still
 * stoppable meanwhile (a stop marks run.json, which the waiting supervisor
 * watches). The supervisor releases them once the command is done.
 */
import {notifyStateChange} from '../../base/bell/notify.js'
import {readRunMetaRaw, readRunResult, updateRunMeta} from '../runs/store.js'
import type {RunMeta} from '../../base/records/run.js'
import {releaseLocks} from './core.js'
import {appendLockTraces, selfIdentity} from './ops.js'
import type {HolderRef, LockSpec} from '../../base/records/lock.js'
import {waitForLocks} from './wait.js'

/** The lock specs recorded in run.json (`locks`), or none. */
export function runLockSpecs(meta: RunMeta): LockSpec[] {
  return Array.isArray(meta.locks) ? (meta.locks as LockSpec[]) : []
}

function runHolder(dir: string, meta: RunMeta): HolderRef {
  return {kind: 'run', run: meta.run, run_instance_id: meta.run_instance_id, state_dir: dir}
}

/** Whether someone asked the Run to end, or already settled it, while it waited. */
function endRequested(dir: string): boolean {
  try {
    const meta = readRunMetaRaw(dir)
    return !meta || Boolean(meta.ending) || readRunResult(dir, meta) !== undefined
  } catch {
    return false
  }
}

export type RunLocksOutcome = {status: 'held' | 'ended'} | {status: 'error'; message: string}

/**
 * Wait (as `queued`) until the Run holds every lock it declares, then mark it
 * `running`. `ending` reports a stop the supervisor itself received.
 */
export async function takeRunLocks(
  home: string,
  dir: string,
  meta: RunMeta,
  ending: () => boolean,
): Promise<RunLocksOutcome> {
  const specs = runLockSpecs(meta)
  if (specs.length === 0) return {status: 'held'}
  try {
    const waited = await waitForLocks(
      home,
      specs,
      {holder: runHolder(dir, meta), waiter: selfIdentity()},
      {
        deadline: Infinity,
        watch: [dir],
        stop: () => ending() || endRequested(dir),
        onTraces: appendLockTraces,
        onBlocked: (blocked) => {
          updateRunMeta(dir, (current) =>
            current.status === 'queued' ? {...current, waiting_for: blocked} : undefined,
          )
          notifyStateChange(home)
        },
      },
    )
    if (waited.status !== 'granted') return {status: 'ended'}
  } catch (error) {
    return {status: 'error', message: (error as Error).message}
  }
  updateRunMeta(dir, (current) => {
    const next: RunMeta = {
      ...current,
      status: current.status === 'queued' ? 'running' : current.status,
      started_at: new Date().toISOString(),
    }
    delete next.waiting_for
    return next
  })
  notifyStateChange(home)
  return {status: 'held'}
}

/** Release the Run's Recipe locks (its command is done); the next waiters wake. Never throws. */
export function releaseRunLocks(dir: string, home: string, meta: RunMeta): void {
  const specs = runLockSpecs(meta)
  if (specs.length === 0) return
  try {
    appendLockTraces(
      releaseLocks(
        home,
        specs.map((s) => s.name),
        runHolder(dir, meta),
        {strict: false},
      ).traces,
    )
  } catch {}
}
