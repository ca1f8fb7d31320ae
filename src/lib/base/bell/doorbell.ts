/**
 * Sleeping until a directory changes. The kernel rings `$ACTORS_HOME/.bell`
 * (notify.ts) whenever a Run starts, ends or asks for attention; one
 * non-recursive fs.watch on the state root sees that rename (a Run's own dir
 * is watched the same way for its logs and files). A slow safety poll catches
 * what rings nobody (a supervisor killed with SIGKILL is only settled when
 * someone reads it); a fast poll stands in where the platform gives no
 * notifications.
 */
import {watch, type FSWatcher} from 'node:fs'

/** Re-check this often even when notifications work (the default). */
export const SAFETY_POLL_MS = 2000
/** Re-check at least this often when fs.watch is unavailable. */
export const FALLBACK_POLL_MS = 250

export class Doorbell {
  private watcher: FSWatcher | undefined
  /** Whether the watch was set up (by the first next()). */
  private armed = false
  private rung = false
  private wake: (() => void) | undefined

  /** Ring on changes in `dir`; `pollMs` is the safety re-check while notifications work. Nothing is watched until next() needs it. */
  constructor(
    private readonly dir: string,
    private readonly pollMs = SAFETY_POLL_MS,
  ) {}

  private arm(): void {
    this.armed = true
    try {
      this.watcher = watch(this.dir, {persistent: true}, () => this.ring())
      this.watcher.on('error', () => {
        this.watcher?.close()
        this.watcher = undefined
        this.ring()
      })
    } catch {
      this.watcher = undefined
    }
  }

  /** Whether file-system notifications are live (false means polling). */
  get watching(): boolean {
    return this.watcher !== undefined
  }

  /**
   * Noted at once; the sleeper is woken on the next turn of the event loop,
   * never inside the watch's callback. What it does when woken (often all the
   * rest of the command, up to process.exit()) would otherwise run inside
   * libuv's read of the inotify events, which defers the removal of a watch
   * closed meanwhile until that read returns: the process then exits with a
   * live watch, and the kernel's teardown of it (an SRCU grace period) held
   * the exit back by 10-20 ms after a `wait` had printed.
   */
  private ring(): void {
    this.rung = true
    const wake = this.wake
    // Only the sleeper of this ring: one woken meanwhile (its poll, its deadline) may have been followed by another.
    if (wake) setImmediate(() => this.wake === wake && wake())
  }

  /** Forget rings so far: call right before re-reading state, so a ring during the read is not lost. */
  clear(): void {
    this.rung = false
  }

  /**
   * Resolve at the next ring (immediately if one came since clear()), a poll
   * tick, `deadline`, or when `signal` aborts. The first call sets up the
   * watch and resolves at once: a change made between the caller's first
   * look and the watch rang nobody, so the caller looks again, now watched.
   * Watching only from there spares the many waits that find what they wait
   * for at their first look: fs.watch costs about 10 ms of a command's start
   * (Node's watcher module, inotify).
   */
  async next(deadline = Infinity, signal?: AbortSignal): Promise<void> {
    if (!this.armed) {
      this.arm()
      return
    }
    if (this.rung || signal?.aborted) return
    const poll = this.watching ? this.pollMs : Math.min(this.pollMs, FALLBACK_POLL_MS)
    const delay = Math.max(0, Math.min(poll, deadline - Date.now()))
    await new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer)
        this.wake = undefined
        signal?.removeEventListener('abort', done)
        resolve()
      }
      const timer = setTimeout(done, delay)
      this.wake = done
      signal?.addEventListener('abort', done, {once: true})
    })
  }

  close(): void {
    this.watcher?.close()
    this.watcher = undefined
  }
}
