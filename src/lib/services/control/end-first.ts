/**
 * Nothing in a state dir can block an end (issue: a Run that keeps a link at
 * its own children.jsonl, result.json or a garbage run.json was unkillable;
 * one that deleted its state dir was "not found"). When `stop`, `kill` or
 * `close` cannot go the usual way because of what it found in the state dir
 * (damage: exit 1; a state dir gone: exit 4; a lock held past its wait:
 * exit 5; anything unexpected), the Run's unit is found from facts the
 * machine keeps (containment/unit-facts.ts) and ended first (a kill
 * SIGKILLs it; a stop or close sends SIGTERM, then SIGKILL after the kill
 * grace); then the refusal is reported, exit 1, naming what was damaged. A
 * lock of its state dir, or of a live descendant's (the end of a tree takes
 * each one's locks), kept against the end (kept-locks.ts) is removed
 * and the end goes the usual way after all. A refusal that is the answer (a
 * finished Run, a recycled pid, a bad action) stays as it is. A state dir
 * that is a link is damage: nothing is looked at or removed through it.
 */
import {unlinkSync} from 'node:fs'
import {isPlainDir} from '../../base/platform/private-files.js'
import {dirname, join} from 'node:path'
import {ActorsError, EXIT, isActorsError} from '../../base/platform/errors.js'
import {withSyncLockWaitsCapped} from '../../base/platform/file-lock.js'
import type {ProcessIdentity} from '../../base/platform/process-identity.js'
import {readRunMetaRaw} from '../../kernel/runs/store.js'
import {collectDescendants} from '../../kernel/runs/children.js'
import {isTerminal} from '../../base/records/run.js'
import {lockHolder, locksKeptFromTheEnd} from './kept-locks.js'
import {resolveRunRef, runDir} from '../../base/platform/home.js'
import {homeKey} from '../../kernel/containment/index.js'
import {findUnitByFacts, killUnitByFacts, stopUnitByFacts} from '../../kernel/containment/unit-facts.js'
import {launchedKillGraceMs} from '../../kernel/signals/end-run.js'
import {recordedKillGraceMs} from '../../base/records/run.js'
import {cancelSlurmJobsByFacts} from '../../kernel/executors/index.js'

/** Whether `error` (from an end that went the usual way) may have left the Run's unit running. */
function mayBlockAnEnd(error: unknown): boolean {
  if (!isActorsError(error)) return true
  return error.exitCode === EXIT.failed || error.exitCode === EXIT.notFound || error.exitCode === EXIT.refused
}

/** Run `end` (a stop, kill or close of the Run `ref`); if it fails in a way that may leave the unit running, end the unit by facts, then report. */
export async function endFirst<T>(home: string, ref: string, verb: string, end: () => Promise<T>): Promise<T> {
  let id: string | undefined
  try {
    id = resolveRunRef(home, ref)
  } catch {}
  // A lock of its state dir that the Run keeps would hold the usual way for its whole wait; so would one of a live
  // descendant's, which the tree's end takes in turn: 30 s per child a Run chose to keep (red-team 15 N5-H1).
  const tree = id === undefined ? [] : treeDirs(home, runDir(home, id))
  const {kept, capped} = tree.length > 0 ? await locksKeptFromTheEnd(home, tree) : {kept: [], capped: false}
  if (kept.length > 0 && id !== undefined) throw await endPastKeptLocks(home, id, ref, verb, kept, tree.slice(1), end)
  try {
    // Launches held a lock in turn (a parent launching in a loop, or a Run naming fresh ones): no wait is waited in full.
    return await (capped ? withSyncLockWaitsCapped(RETRY_LOCK_WAIT_MS, end, RETRY_TOTAL_WAIT_MS) : end())
  } catch (error) {
    if (id === undefined) throw error
    if (mayBlockAnEnd(error)) throw await endUnitFirst(home, id, ref, verb, error)
    if (!unitLivesOn(home, id, error)) throw error
    const file = join(runDir(home, id), 'run.json')
    const claim = new ActorsError(
      `${file}: ${(error as Error).message}, yet its unit still runs`,
      EXIT.failed,
      'the Run wrote its own end; inspect run.json and result.json by hand',
    )
    throw await endUnitFirst(home, id, ref, verb, claim)
  }
}

/**
 * The state dirs an end of the Run in `dir` takes locks of: its own, then
 * each live descendant's its children journals name. None that is a link
 * (a Run that put `runs/ID -> elsewhere`): nothing is read or removed
 * through it (red-team 15 N5-L1); the usual way refuses it as damage and
 * the unit is ended by facts.
 */
function treeDirs(home: string, dir: string): string[] {
  if (!isPlainDir(dir)) return []
  try {
    const meta = readRunMetaRaw(dir)
    if (!meta) return [dir]
    const live = collectDescendants(home, dir, meta, {treeEnd: true}).filter((d) => !isTerminal(d.meta.status))
    return [dir, ...live.map((d) => d.dir).filter(isPlainDir)]
  } catch {
    return [dir]
  }
}

/**
 * End the Run past locks of its tree's state dirs that were kept (`kept`):
 * remove them and end it the usual way, its lock waits capped (each, and
 * all together: a tree's end takes many), so the stop is a stop (its TERM
 * handler runs) and the end is recorded as what was asked (a neighbour that
 * named its own process in this Run's lock made the user's stop a SIGKILL,
 * recorded as a failure). Kept again, or failing, the unit and those of its
 * live descendants (`below`) are ended first by facts. Returns the error to
 * report, exit 1, naming the locks either way.
 */
async function endPastKeptLocks<T>(
  home: string,
  id: string,
  ref: string,
  verb: string,
  kept: ActorsError[],
  below: string[],
  end: () => Promise<T>,
): Promise<unknown> {
  const named = namingAll(kept)
  if (kept.filter(breakKeptLock).length > 0) {
    try {
      await withSyncLockWaitsCapped(RETRY_LOCK_WAIT_MS, end, RETRY_TOTAL_WAIT_MS)
      // A descendant whose lock was kept again was reported by the cascade, not ended: it is, by facts.
      for (const dir of below)
        if (findUnitByFacts(dir, homeKey(home)).pids.length > 0) await endByFacts(dir, homeKey(home), verb)
      const done = verb === 'kill' ? 'killed' : verb === 'close' ? 'closed' : 'stopped'
      const those = kept.length === 1 ? 'that lock' : 'those locks'
      return new ActorsError(
        `${named.message}; removed ${those}, and ${ref} was ${done} the usual way`,
        EXIT.failed,
        named.fix,
      )
    } catch (error) {
      if (isActorsError(error) && !mayBlockAnEnd(error)) return error
    }
  }
  const reported = await endUnitFirst(home, id, ref, verb, named, below)
  // Nothing of the Run is left to let go of them: the supervisors record their ends now, not after their own lock wait.
  for (const lock of kept) breakKeptLock(lock)
  return reported
}

/** One error naming every kept lock: the first as found, the others after it. */
function namingAll(kept: ActorsError[]): ActorsError {
  if (kept.length === 1) return kept[0]
  const others = kept.slice(1).map((k) => (k.details as {lock?: string} | undefined)?.lock)
  return new ActorsError(`${kept[0].message} (and ${others.join(', ')})`, EXIT.failed, kept[0].fix, kept[0].details)
}

/** How long an end retried past a lock it removed waits for a lock of the state dir: one taken again is kept. */
const RETRY_LOCK_WAIT_MS = 5000

/** How long it waits for all of them, however many Runs its tree has. */
const RETRY_TOTAL_WAIT_MS = 10_000

/**
 * Whether a refusal that the Run is finished (exit 3) came while something of
 * its unit still runs: run.json and result.json are the Run's to write, so one
 * that marks itself `done` must not keep a kill away from its command. (A
 * recorded process whose identity does not match stays refused, exit 3:
 * never signalled, as the SPEC says.)
 */
function unitLivesOn(home: string, id: string, error: unknown): boolean {
  if (!isActorsError(error) || error.exitCode !== EXIT.notActive || error.details?.pid !== undefined) return false
  return findUnitByFacts(runDir(home, id), homeKey(home)).pids.length > 0
}

/**
 * End the unit of Run `id` by facts, as `verb` asks: a kill SIGKILLs it, a
 * stop or close sends SIGTERM first and kills what is left after the
 * launch's kill grace (a Run that kept a lock of its state dir, or had one
 * kept, still gets its own TERM handler run). Returns the error to report:
 * `error` as it was when nothing of the Run was found.
 */
async function endUnitFirst(
  home: string,
  id: string,
  ref: string,
  verb: string,
  error: unknown,
  below: string[] = [],
): Promise<unknown> {
  const dir = runDir(home, id)
  const {termed, killed, leftover} = await endByFacts(dir, homeKey(home), verb)
  // The live descendants' units too, when their locks were kept against the tree's end (their own ends may not have run).
  for (const other of below) {
    const ended = await endByFacts(other, homeKey(home), verb)
    termed.push(...ended.termed)
    killed.push(...ended.killed)
    leftover.push(...ended.leftover)
  }
  // A Slurm Run's unit is its job, wherever it runs: the one Slurm lists under the Run's name and instance.
  const jobs = cancelSlurmJobsByFacts(home, id)
  if (termed.length === 0 && killed.length === 0 && jobs.length === 0) return error
  const reason = (error as Error).message
  const ended = [
    termed.length ? `SIGTERM to ${termed.length} process(es)` : '',
    killed.length ? `SIGKILL to ${killed.length} process(es)` : '',
    jobs.length ? `Slurm job ${jobs.join(', ')} cancelled` : '',
  ].filter(Boolean)
  const left = leftover.length ? `; still alive: ${leftover.map((l) => `${l.pid} (${l.command})`).join(', ')}` : ''
  const how = verb === 'kill' ? 'killed' : 'stopped'
  return new ActorsError(
    `could not ${verb} ${ref} the usual way (${reason}); its unit was ${how} first: ${ended.join('; ')}${left}`,
    EXIT.failed,
    isActorsError(error) && error.fix ? error.fix : `inspect ${dir} by hand`,
    {signalled: [...new Set([...termed, ...killed])], leftover, ...(jobs.length ? {cancelled_jobs: jobs} : {})},
  )
}

/** The unit of the Run in `dir`, ended by facts as `verb` asks (endUnitFirst): what was sent SIGTERM, SIGKILL, and left. */
async function endByFacts(dir: string, key: string, verb: string) {
  if (verb !== 'kill') return stopUnitByFacts(dir, key, launchedGraceMs(dir))
  const {signalled, leftover} = killUnitByFacts(dir, key)
  return {termed: [] as number[], killed: signalled, leftover}
}

/**
 * The kill grace the Run was launched with, from its proven supervisor's
 * command line; the default without one (run.json's own `kill_grace_ms` is
 * the Run's to rewrite, an hour at most).
 */
function launchedGraceMs(dir: string): number {
  let launched: number | undefined
  try {
    const meta = readRunMetaRaw(dir)
    launched = meta ? launchedKillGraceMs(meta, dir) : undefined
  } catch {}
  return recordedKillGraceMs({kill_grace_ms: launched})
}

/** Remove the lock `kept` names, while it still names the holder that kept it (a fresh take is left alone). */
function breakKeptLock(kept: ActorsError): boolean {
  const {lock, holder} = (kept.details ?? {}) as {lock?: string; holder?: ProcessIdentity}
  // Never through a link put at the state dir since it was looked at (red-team 15 N5-L1).
  if (!lock || !holder || !isPlainDir(dirname(lock))) return false
  const now = lockHolder(lock)
  if (now?.pid !== holder.pid || now.start !== holder.start) return false
  try {
    unlinkSync(lock)
    return true
  } catch {
    return false
  }
}
