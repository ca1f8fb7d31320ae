/**
 * Holders that can never let go: a process holder whose pid is 1. A lock
 * taken from a subshell that is gone (`(actors lock acquire L &)`) has init as
 * its calling process, which never exits, so the slot would be held for good.
 * Acquire refuses such a holder; `lock release L --holder pid:1` clears one
 * taken before this rule.
 */
import {usageError} from '../../base/platform/errors.js'
import {readLockState} from './store.js'
import {validateLockName, type HolderRef} from '../../base/records/lock.js'

const INIT_LABEL = 'pid:1'

/** Refuse a process holder that is init (pid 1): it never exits, so it would hold the slot for good. */
export function refuseInitHolder(holder: HolderRef): HolderRef {
  if (holder.kind === 'process' && holder.pid === 1) {
    throw usageError(
      'the calling process is init (pid 1): the shell that ran actors is gone (as in `(actors lock acquire L &)`), so nothing would ever release this slot',
      'acquire from a live shell or script, or name the holder with a lease: --holder ID --lease DURATION (and renew or release it)',
    )
  }
  return holder
}

/**
 * The holder `--holder` names for `lock release`: `pid:1` is the init holder
 * recorded on lock `name` (the only process holder named by label, since init
 * can never release its own slot); anything else is a named holder.
 */
export function releaseHolderRef(
  home: string,
  name: string,
  holderId: string | undefined,
  caller: (id: string | undefined) => HolderRef,
): HolderRef {
  if (holderId !== INIT_LABEL) return caller(holderId)
  const entry = readLockState(home, validateLockName(name)).holders.find(
    (e) => e.holder.kind === 'process' && e.holder.pid === 1,
  )
  if (!entry)
    throw usageError(`lock ${name} has no holder ${INIT_LABEL}`, `see its holders: actors lock status ${name}`)
  return entry.holder
}
