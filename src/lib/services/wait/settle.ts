/**
 * The settle window of `actors wait` (SPEC: Commands, `wait`): once a look
 * finds terminals that would complete the wait, the batch is not claimed at
 * once while other waited-for Runs are still live; it is claimed when no new
 * terminal has come for one window, so Runs ending close together form one
 * batch (`--any` included). The extension is bounded: the batch is claimed
 * at the latest MAX_SETTLE_WINDOWS windows after the first terminal was seen,
 * so a steady stream of ends cannot keep a caller waiting for ever.
 */

/** The default window: `wait --settle` unset. */
export const DEFAULT_SETTLE_MS = 200
/** However many ends keep arriving, a batch is claimed this many windows after its first terminal was seen. */
export const MAX_SETTLE_WINDOWS = 5

export class SettleWindow {
  private firstAt: number | undefined
  private lastNewAt = 0
  private readonly seen = new Set<string>()

  constructor(private readonly windowMs: number) {}

  /**
   * Note the ready members a look found (their keys); returns when the batch
   * may be claimed (a time at or before `now`: claim it now).
   */
  claimAt(keys: Iterable<string>, now = Date.now()): number {
    if (this.windowMs <= 0) return now
    if (this.firstAt === undefined) this.firstAt = now
    for (const key of keys) {
      if (this.seen.has(key)) continue
      this.seen.add(key)
      this.lastNewAt = now
    }
    return Math.min(this.lastNewAt + this.windowMs, this.firstAt + MAX_SETTLE_WINDOWS * this.windowMs)
  }

  /** Nothing is ready any more (another wait claimed it): the next ready look opens a new window. */
  reset(): void {
    this.firstAt = undefined
    this.seen.clear()
  }
}
