/**
 * The max-parallel queue of one parent Run. Admission (count the parent's
 * running children, create the new one running or `queued`, record it) and
 * release (start queued children FIFO when a slot frees) both happen under the
 * parent's children lock, so two launches or two endings at the same moment
 * never overfill the cap and never skip a queued child.
 */
import {withLockSync} from '../../base/platform/file-lock.js'
import {launchRun, startRun, type LaunchResult, type LaunchSpec} from './launch.js'
import {executorOf} from '../../kernel/executors/index.js'
import {notifyStateChange} from '../../base/bell/notify.js'
import {
  readRunMetaRaw,
  readRunResult,
  runFile,
  settledResult,
  writeResultLocked,
  type RunState,
} from '../../kernel/runs/store.js'
import type {RunMeta} from '../../base/records/run.js'
import {childrenLock, readChildren, recordChild} from '../../kernel/runs/children.js'
import {traceChildEnded, traceChildStarted} from '../../kernel/runs/child-events.js'
import {endingTreeRefusal} from '../../kernel/runs/tree-ending.js'

const LIVE_RUNNING = new Set(['running', 'paused'])

/**
 * Holds a slot of the parent's cap: running, paused, or queued with a
 * supervisor already waiting for the Run's locks ([locks]) or a Slurm job
 * already submitted (pending in Slurm's own queue).
 */
function holdsSlot(meta: RunMeta): boolean {
  return (
    LIVE_RUNNING.has(meta.status) ||
    (meta.status === 'queued' && (meta.pid !== undefined || executorOf(meta).handedOver(meta)))
  )
}

/** Waits in this parent's queue for a slot (created queued and never started). */
function waitsForSlot(meta: RunMeta): boolean {
  return meta.status === 'queued' && meta.pid === undefined && !executorOf(meta).handedOver(meta)
}

function capOf(parent: RunMeta): number {
  return typeof parent.max_parallel === 'number' && parent.max_parallel >= 1 ? parent.max_parallel : Infinity
}

function parentIsEnding(parent: RunMeta): boolean {
  return Boolean(parent.ending) || parent.status === 'cancelled' || parent.status === 'killed'
}

/**
 * Create a child Run of the parent in `parentDir`: running when the parent has
 * a free slot and nobody queued ahead of it, else `queued`. Records it in the
 * parent's children journal.
 */
export function launchChild(parentDir: string, spec: LaunchSpec): LaunchResult {
  return withLockSync(childrenLock(parentDir), () => {
    const parent = readRunMetaRaw(parentDir)
    // Under this lock, which a tree's stop takes to read this journal: refused here, or found by that walk (tree-ending.ts).
    const refusal = parent && endingTreeRefusal(spec.home, parentDir, parent)
    if (refusal) throw refusal
    const children = parent ? readChildren(spec.home, parentDir, parent) : []
    const running = children.filter((c) => holdsSlot(c.meta)).length
    const waiting = children.some((c) => waitsForSlot(c.meta))
    const queued = parent !== undefined && (waiting || running >= capOf(parent))
    // Journaled before it starts: a launching process killed in between leaves no started child the journal misses.
    const launched = launchRun({...spec, queued}, (dir, meta) =>
      recordChild(parentDir, {
        run: meta.run,
        run_instance_id: meta.run_instance_id,
        state_dir: dir,
        created_at: new Date().toISOString(),
        queued,
      }),
    )
    let result = launched
    // A slot may be free with children still queued (the read above settled a lost
    // running child, and a read starts nobody): start them now, oldest first.
    if (queued && parent) {
      fillSlotsLocked(spec.home, parentDir, parent)
      const now = readRunMetaRaw(launched.state_dir)
      if (now && now.status !== 'queued') result = {...launched, status: now.status, pid: now.pid ?? null}
    }
    traceChildStarted(parentDir, result) // runtime.child_started in the parent's Trace (child-events.ts)
    return result
  })
}

/** Start queued children while the cap allows, or cancel them when the parent is ending. Caller holds the children lock. */
function fillSlotsLocked(home: string, parentDir: string, parent: RunMeta): void {
  const children = readChildren(home, parentDir, parent)
  const queued = children.filter((c) => waitsForSlot(c.meta))
  if (queued.length === 0) return
  // An ancestor being stopped or killed ends this parent's tree too: its queued children never start.
  if (parentIsEnding(parent) || endingTreeRefusal(home, parentDir, parent, {endedParent: false})) {
    for (const child of queued) cancelQueuedRun(home, child, 'parent_stopped')
    return
  }
  let running = children.filter((c) => holdsSlot(c.meta)).length
  const cap = capOf(parent)
  for (const child of queued) {
    if (running >= cap) break
    startRun(home, child.dir)
    running++
  }
}

/**
 * Fill the parent's free slots with its queued children, oldest first; when
 * the parent was stopped or killed, cancel them instead. Safe to call any
 * time (after any child ends, after the parent ends); never throws.
 */
export function releaseQueuedChildren(home: string, parentDir: string): void {
  try {
    withLockSync(childrenLock(parentDir), () => {
      const parent = readRunMetaRaw(parentDir)
      if (parent) fillSlotsLocked(home, parentDir, parent)
    })
  } catch {}
}

/** Settle a never-started (queued) Run as `cancelled`; there is no process to signal. Returns whether it did. */
export function cancelQueuedRun(home: string, child: RunState, reason: string): boolean {
  const settled = withLockSync(runFile(child.dir, 'lock'), () => {
    const meta = readRunMetaRaw(child.dir)
    // A Run handed to its executor (a submitted Slurm job) is pending in that engine's queue, not ours: it is ended through it.
    if (meta?.status !== 'queued' || executorOf(meta).handedOver(meta) || readRunResult(child.dir, meta)) return false
    return writeResultLocked(child.dir, meta, settledResult(meta, 'cancelled', reason))
  })
  if (settled) {
    notifyStateChange(home)
    // Nobody else follows up a queued Run's end: its parent's Trace hears of it here.
    const ended = readRunMetaRaw(child.dir)
    if (ended) traceChildEnded(home, ended)
  }
  return settled
}
