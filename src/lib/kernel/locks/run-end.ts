/**
 * The locks' part of "a Run ended" (a Run-end follow-up, see after-run.ts):
 * every slot and queue place the Run instance had goes, whoever settled the
 * Run (its supervisor, reconciliation as `exited`, a control). Lock
 * operations also drop terminal Runs lazily (liveness.ts), so this only makes
 * the slot free sooner and wakes the next waiter. Nothing goes to the ended
 * Run's Trace: once result.json exists its Trace is closed.
 */
import {existsSync, readdirSync} from 'node:fs'
import type {RunMeta} from '../../base/records/run.js'
import {releaseLocks} from './core.js'
import {isLockName, locksDir} from '../../base/records/lock.js'

/** Release whatever the ended Run `meta` held or waited for. Never throws. */
export function releaseLocksOfEndedRun(home: string, meta: RunMeta): void {
  const dir = locksDir(home)
  if (!existsSync(dir)) return
  try {
    const holder = {
      kind: 'run' as const,
      run: meta.run,
      run_instance_id: meta.run_instance_id,
      state_dir: String(meta.state_dir ?? ''),
    }
    for (const file of readdirSync(dir)) {
      const name = file.endsWith('.json') ? file.slice(0, -'.json'.length) : ''
      if (!isLockName(name)) continue
      try {
        releaseLocks(home, [name], holder, {strict: false, reason: 'run_ended'})
      } catch {}
    }
  } catch {}
}
