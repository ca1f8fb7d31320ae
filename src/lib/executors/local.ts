/**
 * The local executor's liveness check: the supervisor is a detached process
 * on this machine, alive while its recorded process identity matches.
 */
import {isSameProcess} from '../process-identity.js'
import type {RunMeta} from '../run-types.js'
import type {SupervisorCheck} from './types.js'

/** How long a Run may sit with no supervisor identity recorded before we call it lost. */
export const LAUNCH_GRACE_MS = 30_000

/** Whether the local supervisor of a live Run is still there (a queued Run has none yet and is alive). */
export function checkLocalSupervisor(meta: RunMeta): SupervisorCheck {
  if (meta.status === 'queued') return {alive: true}
  if (meta.process_identity) return isSameProcess(meta.process_identity) ? {alive: true} : lost()
  // Launched but the supervisor's identity was never recorded: lost only after a grace period.
  return Date.now() - Date.parse(meta.created_at) > LAUNCH_GRACE_MS ? lost() : {alive: true}
}

function lost(): SupervisorCheck {
  return {alive: false, status: 'exited', reason: 'supervisor_lost'}
}
