/**
 * The Ink path of `--follow` (dynamic import() on a TTY only): mounts
 * FollowView, re-renders it from the follow store until the Run ends or the
 * user interrupts, and leaves the result line to the caller.
 */
import {render} from 'ink'
import type {FollowStore} from '../lib/services/view-state/follow-store.js'
import {FollowView} from './follow-view.js'

/** Show `store` until `following` (its run()) ends with the Run; resolves true when interrupted (SIGINT/SIGTERM) instead. */
export async function showFollow(store: FollowStore, following: Promise<void>): Promise<boolean> {
  let interrupted = false
  const instance = render(<FollowView snapshot={store.snapshot()} />, {exitOnCtrlC: false, patchConsole: false})
  const unsubscribe = store.subscribe(() => instance.rerender(<FollowView snapshot={store.snapshot()} />))
  const stop = () => {
    interrupted = true
    store.close()
  }
  process.once('SIGINT', stop)
  process.once('SIGTERM', stop)
  try {
    await following
    instance.rerender(<FollowView snapshot={store.snapshot()} />)
  } finally {
    unsubscribe()
    process.off('SIGINT', stop)
    process.off('SIGTERM', stop)
    instance.unmount()
    await instance.waitUntilExit()
  }
  return interrupted
}
