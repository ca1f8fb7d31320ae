/**
 * Waiting for a condition on files, woken by file-system notifications on a
 * directory instead of a tight polling loop. The slow `pollMs` tick is only a
 * safety net for file systems that do not notify (and for conditions that
 * change without touching the directory, like a process exiting).
 */
import {watch, type FSWatcher} from 'node:fs'

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
export async function watchUntil<T>(dir: string, read: () => T, done: (value: T) => boolean, options: WatchUntilOptions = {}): Promise<T> {
  const deadline = options.timeoutMs === undefined ? Infinity : Date.now() + options.timeoutMs
  const pollMs = options.pollMs ?? 1000
  let wake: (() => void) | undefined
  let watcher: FSWatcher | undefined
  try {
    watcher = watch(dir, () => wake?.())
  } catch {}
  try {
    for (;;) {
      const value = read()
      if (done(value) || Date.now() >= deadline) return value
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.min(pollMs, Math.max(1, deadline - Date.now())))
        wake = () => {
          clearTimeout(timer)
          resolve()
        }
      })
      wake = undefined
    }
  } finally {
    watcher?.close()
  }
}
