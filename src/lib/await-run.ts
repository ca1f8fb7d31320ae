/**
 * Waiting for one Run to become terminal, woken by the state root's doorbell
 * (see notify.ts) with a slow safety poll. Used by `run --wait` for the Run it
 * started.
 */
import {watch} from 'node:fs'
import {readRunState, type RunState} from './run-store.js'
import {isTerminal} from './run-types.js'

/** Resolve with the Run's final state once it is terminal (or undefined if its dir vanished). */
export async function awaitRunEnd(home: string, dir: string, timeoutMs?: number): Promise<RunState | undefined> {
  const deadline = timeoutMs === undefined ? Infinity : Date.now() + timeoutMs
  let wake: (() => void) | undefined
  const watcher = (() => {
    try {
      return watch(home, () => wake?.())
    } catch {
      return undefined
    }
  })()
  try {
    for (;;) {
      const state = readRunState(dir)
      if (!state || isTerminal(state.meta.status)) return state
      if (Date.now() >= deadline) return state
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.min(1000, Math.max(1, deadline - Date.now())))
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
