/**
 * Waiting a while: `sleep` for async code, `sleepSync` for the synchronous
 * paths (lock waits, sweeps inside a read) that must not return to the event
 * loop. One place, so no module grows its own little timer promise.
 */

/** Resolve after `ms`. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms))
}

const sleeper = new Int32Array(new SharedArrayBuffer(4))

/** Block the thread for `ms` without spinning. */
export function sleepSync(ms: number): void {
  Atomics.wait(sleeper, 0, 0, ms)
}
