/**
 * The one question run-store asks about a live Run, whoever runs its
 * supervisor (SPEC: Executors): is the supervisor still there, and if not,
 * what ended the Run? A local supervisor is a process on this machine
 * (checked through its recorded identity); a Slurm one is a batch job
 * (checked through Slurm, never through this machine's /proc).
 */
import type {RunMeta} from '../runs/types.js'
import {checkLocalSupervisor} from './local.js'
import {checkSlurmSupervisor, isSlurmRun} from './slurm.js'
import type {SupervisorCheck} from './types.js'
import {endLostRunUnit} from './containment/lost.js'
import {nodeOs} from '../platform/builtins.js'

export type {SupervisorCheck}

/** Ask the Run's executor about its supervisor (called on every read of a live Run). */
export function checkSupervisor(meta: RunMeta): SupervisorCheck {
  return isSlurmRun(meta) ? checkSlurmSupervisor(meta) : checkLocalSupervisor(meta)
}

/** How often a reader re-checks a remote Run: file notifications do not cross machines. */
export const REMOTE_POLL_MS = 500

/** True for a live Run whose files are written on another machine (a Slurm node). */
export function isRemoteRun(meta: Pick<RunMeta, 'executor'> | undefined): boolean {
  return meta !== undefined && isSlurmRun(meta)
}

export {isSlurmRun}

/**
 * End what is left of a Run whose supervisor is lost, before it is written
 * `exited` (SPEC: Containment): its unit's processes on this machine. A
 * Slurm job is its own unit, ended by Slurm. Returns result.json fields.
 */
export function endLostRun(meta: RunMeta): Record<string, unknown> {
  if (isSlurmRun(meta)) return {}
  const {leftover, usage} = endLostRunUnit(meta, nodeOs().hostname())
  return {
    ...(usage ? {resources: {cpu_seconds: usage.cpu_seconds, peak_memory_bytes: usage.peak_memory_bytes}} : {}),
    ...(leftover.length > 0 ? {leftover} : {}),
  }
}
