/**
 * Waiting for one Run to become terminal, woken by the state root's doorbell
 * (see notify.ts). Used by controls that must report the final status.
 */
import {readRunState, type RunState} from './store.js'
import {isTerminal} from '../../base/records/run.js'
import {watchUntil} from '../../base/bell/watch-until.js'

/** Resolve with the Run's state once it is terminal (or undefined if its dir vanished), or at the timeout. */
export function awaitRunEnd(home: string, dir: string, timeoutMs?: number): Promise<RunState | undefined> {
  return watchUntil(
    home,
    () => readRunState(dir),
    (state) => !state || isTerminal(state.meta.status),
    {timeoutMs},
  )
}
