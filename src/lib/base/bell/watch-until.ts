/**
 * Waiting for a condition on files, woken by file-system notifications on a
 * directory (a Doorbell) instead of a tight polling loop. The slow `pollMs`
 * tick is only a safety net for file systems that do not notify (and for
 * conditions that change without touching the directory, like a process
 * exiting).
 */
import {Doorbell} from './doorbell.js'

export interface WatchUntilOptions {
  /** Give up after this long and return the last reading. */
  timeoutMs?: number
  /** Re-check at least this often even without a notification. */
  pollMs?: number
}

/**
 * Re-evaluate `read` whenever something in `dir` changes until `done(value)`
 * holds (or the timeout passes); returns the last value read.
 */
export async function watchUntil<T>(
  dir: string,
  read: () => T,
  done: (value: T) => boolean,
  options: WatchUntilOptions = {},
): Promise<T> {
  const deadline = options.timeoutMs === undefined ? Infinity : Date.now() + options.timeoutMs
  const bell = new Doorbell(dir, options.pollMs ?? 1000)
  try {
    for (;;) {
      // Cleared before reading, so a change during the read wakes the next wait at once.
      bell.clear()
      const value = read()
      if (done(value) || Date.now() >= deadline) return value
      await bell.next(deadline)
    }
  } finally {
    bell.close()
  }
}
