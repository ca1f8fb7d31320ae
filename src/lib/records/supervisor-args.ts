/**
 * What a Run's live supervisor was started with, read from its command line
 * (`dist/supervisor.cjs DIR KIND GRACE_MS`): facts of the launch that a Run
 * cannot rewrite, unlike its run.json (issue: a Run that rewrote its
 * `executor` or `kill_grace_ms` steered where `kill` went, or how long `stop`
 * waited). Read only while the supervisor recorded in run.json is alive
 * (identity checked) and names this very state dir.
 */
import {readFileSync} from 'node:fs'
import {resolve} from 'node:path'
import {isSameProcess} from '../platform/process-identity.js'
import type {RunMeta} from './run.js'

export interface SupervisorArgs {
  /** The executor kind it runs as (`local`, `slurm`). */
  kind?: string
  /** The kill_grace of the launch, ms (absent for supervisors started without it). */
  killGraceMs?: number
}

/** The live supervisor's launch arguments for the Run in `dir`; undefined when none runs here. */
export function supervisorArgs(meta: Pick<RunMeta, 'process_identity'>, dir: string): SupervisorArgs | undefined {
  const identity = meta.process_identity
  if (!identity || !isSameProcess(identity)) return undefined
  let args: string[]
  try {
    args = readFileSync(`/proc/${identity.pid}/cmdline`, 'utf8').split('\0')
  } catch {
    return undefined
  }
  const script = args.findIndex((arg, index) => index > 0 && arg.endsWith('/supervisor.cjs'))
  if (script < 1 || !args[script + 1] || resolve(args[script + 1]!) !== resolve(dir)) return undefined
  const grace = Number(args[script + 3])
  return {
    ...(args[script + 2] ? {kind: args[script + 2]} : {}),
    ...(args[script + 3] && Number.isFinite(grace) && grace >= 0 ? {killGraceMs: grace} : {}),
  }
}
