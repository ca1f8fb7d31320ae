/**
 * Nothing in a state dir can block an end (issue: a Run that keeps a link at
 * its own children.jsonl, result.json or a garbage run.json was unkillable;
 * one that deleted its state dir was "not found"). When `stop`, `kill` or
 * `close` cannot go the usual way because of what it found in the state dir
 * (damage: exit 1; a state dir gone: exit 4; a lock held past its wait:
 * exit 5; anything unexpected), the Run's unit is found from facts the
 * machine keeps (containment/unit-facts.ts) and killed first; then the
 * refusal is reported, exit 1, naming what was damaged. A refusal that is
 * the answer (a finished Run, a recycled pid, a bad action) stays as it is.
 */
import {ActorsError, EXIT, isActorsError} from '../platform/errors.js'
import {resolveRunRef, runDir} from '../platform/home.js'
import {homeKey} from '../containment/index.js'
import {killUnitByFacts} from '../containment/unit-facts.js'
import {cancelSlurmJobsByFacts} from '../executors/index.js'

/** Whether `error` (from an end that went the usual way) may have left the Run's unit running. */
function mayBlockAnEnd(error: unknown): boolean {
  if (!isActorsError(error)) return true
  return error.exitCode === EXIT.failed || error.exitCode === EXIT.notFound || error.exitCode === EXIT.refused
}

/** Run `end` (a stop, kill or close of the Run `ref`); if it fails in a way that may leave the unit running, kill the unit by facts, then report. */
export async function endFirst<T>(home: string, ref: string, verb: string, end: () => Promise<T>): Promise<T> {
  try {
    return await end()
  } catch (error) {
    if (!mayBlockAnEnd(error)) throw error
    let id: string
    try {
      id = resolveRunRef(home, ref)
    } catch {
      throw error
    }
    const dir = runDir(home, id)
    const {signalled, leftover} = killUnitByFacts(dir, homeKey(home))
    // A Slurm Run's unit is its job, wherever it runs: the one Slurm lists under the Run's name and instance.
    const jobs = cancelSlurmJobsByFacts(home, id)
    if (signalled.length === 0 && jobs.length === 0) throw error
    const reason = (error as Error).message
    const ended = [
      signalled.length ? `SIGKILL to ${signalled.length} process(es)` : '',
      jobs.length ? `Slurm job ${jobs.join(', ')} cancelled` : '',
    ].filter(Boolean)
    const left = leftover.length ? `; still alive: ${leftover.map((l) => `${l.pid} (${l.command})`).join(', ')}` : ''
    throw new ActorsError(
      `could not ${verb} ${ref} the usual way (${reason}); its unit was killed first: ${ended.join('; ')}${left}`,
      EXIT.failed,
      isActorsError(error) && error.fix ? error.fix : `inspect ${dir} by hand`,
      {signalled, leftover, ...(jobs.length ? {cancelled_jobs: jobs} : {})},
    )
  }
}
