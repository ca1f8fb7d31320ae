/**
 * `actors control RUN interrupt` (SPEC: Generations and steering): SIGINT to
 * the process groups of the Run's verified command processes. The Run stays
 * live; the command decides what an interrupt means (an agent stops its
 * current step, a shell loop runs its trap).
 */
import {notActiveError} from '../../base/platform/errors.js'
import {withLockSync} from '../../base/platform/file-lock.js'
import {ledGroups, readProcStat} from '../../base/platform/process-identity.js'
import {readRunMetaRaw, readRunResult, readRunState, runFile} from '../runs/store.js'
import {isTerminal} from '../../base/records/run.js'
import {trace, verifyCommandProcesses} from './runtime-actions.js'

export interface InterruptResult {
  action: 'interrupt'
  run: string
  run_instance_id: string
  status: string
  /** Process groups that were sent SIGINT. */
  signalled_groups: number[]
  handled_by: 'kernel'
  fallback?: string
}

/** SIGINT the live Run in `dir` (exit 3 when it is finished or has no command process right now). */
export function interruptRun(dir: string, fallback?: string): InterruptResult {
  readRunState(dir)
  const outcome = withLockSync(runFile(dir, 'lock'), () => {
    const meta = readRunMetaRaw(dir)
    if (!meta) throw notActiveError(`no Run in ${dir}`)
    const status = readRunResult(dir, meta)?.status ?? meta.status
    if (isTerminal(status))
      throw notActiveError(
        `Run ${meta.run} is ${status}; cannot interrupt it`,
        `resume it with actors send ${meta.run} MESSAGE, or inspect it`,
      )
    const live = verifyCommandProcesses(meta, dir)
    if (live.length === 0)
      throw notActiveError(
        `Run ${meta.run} has no live command process to interrupt right now`,
        'it is queued, between steps or ending; retry in a moment',
      )
    const own = readProcStat(process.pid)?.pgid
    const groups = ledGroups(live).filter((g) => g !== own)
    const signalled: number[] = []
    for (const group of groups) {
      try {
        process.kill(-group, 'SIGINT')
        signalled.push(group)
      } catch {}
    }
    return {meta, signalled}
  })
  trace(dir, outcome.meta, 'interrupt', {groups: outcome.signalled})
  return {
    action: 'interrupt',
    run: outcome.meta.run,
    run_instance_id: outcome.meta.run_instance_id,
    status: outcome.meta.status,
    signalled_groups: outcome.signalled,
    handled_by: 'kernel',
    ...(fallback ? {fallback} : {}),
  }
}
