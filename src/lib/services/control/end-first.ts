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
 * each one's locks), kept against the end (locksKeptFromTheEnd) is removed
 * and the end goes the usual way after all. A refusal that is the answer (a
 * finished Run, a recycled pid, a bad action) stays as it is. A state dir
 * that is a link is damage: nothing is looked at or removed through it.
 */
import {lstatSync, readFileSync, unlinkSync} from 'node:fs'
import {isPlainDir} from '../../base/platform/private-files.js'
import {dirname, join} from 'node:path'
import {ActorsError, EXIT, isActorsError} from '../../base/platform/errors.js'
import {sleep} from '../../base/platform/sleep.js'
import {readLockText, withSyncLockWaitsCapped} from '../../base/platform/file-lock.js'
import {
  isSameProcess,
  isStopped,
  type ProcessIdentity,
  ticksSinceBoot,
  TICKS_PER_SECOND,
} from '../../base/platform/process-identity.js'
import {environOf} from '../../base/platform/process-environ.js'
import {carriesARunsMarker} from '../../kernel/containment/outside-runs.js'
import {supervisorArgs} from '../../base/records/supervisor-args.js'
import {inAnyRunCgroup} from '../../kernel/containment/caller-cgroup.js'
import {readRunMetaRaw} from '../../kernel/runs/store.js'
import {collectDescendants} from '../../kernel/runs/children.js'
import {isTerminal} from '../../base/records/run.js'
import {ENDED_SUPERVISOR_TITLE, runsThisKernel} from '../../base/platform/kernel-process.js'
import {commandOf} from '../../kernel/containment/unit.js'
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

/** How long one process of a Run's unit may hold a lock of the state dir before the end stops waiting for it. */
const OWN_LOCK_GRACE_MS = 2000

/**
 * How long any other process but the Run's supervisor may: every command of
 * the kernel holds a state dir's lock for one read and write, so a holder
 * this long is named in it by the Run (a user's own `actors wait` in a
 * terminal, which takes no lock of it), not holding it; on a machine loaded
 * enough that a real one does, the unit still ends, first.
 */
const ANY_LOCK_GRACE_MS = 10_000

/** The locks of a state dir, each taken only by the kernel's own processes (the CLI, a supervisor, the host). */
const STATE_DIR_LOCKS = [
  '.lock',
  '.controls.lock',
  '.trace.lock',
  '.children.lock',
  '.usage.lock',
  '.inbox.lock',
  '.collected.lock',
]

/**
 * How old an `actors run` of the Run holding its `.children.lock` may be: a
 * launch of a child holds it while the child is created and started, and
 * the end leaves it to its own wait on purpose (the walk then finds the
 * child; a parent launching in a loop has one after another there). One
 * older has finished its launch (`actors run --wait`, `--follow`) or never
 * began one: the Run keeps the lock with it (red-team 15 N5-M1).
 */
const LAUNCH_BOUND_MS = 8000

/**
 * How many launches holding it in turn make a parent that launches in a
 * loop: the end then goes the usual way, its lock waits capped.
 */
const LAUNCHES_IN_TURN = 3

/**
 * The locks of the state dirs `dirs` (a Run's, then its live descendants')
 * kept against its end. Either one held by a live process that runs no part
 * of this kernel (a Run made a `.lock` name pid 1, which lives for ever),
 * or by one that is stopped (a Run SIGSTOPped an `actors` command it named
 * there): nothing is waited for, as no such holder lets go. Or a lock held
 * by one process but that Run's proven supervisor for over its grace
 * (keptLocks): OWN_LOCK_GRACE_MS for one of the Run's own unit or of any
 * Run's unit (a neighbour's genuine `actors wait`, named by the Run; an
 * `actors emit` inside the Run holds one only for a moment), none for an
 * `actors run` of the Run in its own `.children.lock` older than
 * LAUNCH_BOUND_MS, ANY_LOCK_GRACE_MS for any other (the user's own `actors
 * wait` in a terminal, named by the Run): the Run keeps it.
 * However the holders change, the whole wait is ANY_LOCK_GRACE_MS at most.
 * An `actors run` younger than that is watched until it lets go; when
 * launches hold it in turn, or still at the end of the wait, the end goes the
 * usual way with its lock waits capped (`capped`), so a Run that names fresh
 * ones there in turn holds it for those waits at most.
 * Returns the damage to report, one error per lock; none when no lock is kept.
 */
async function locksKeptFromTheEnd(home: string, dirs: string[]): Promise<{kept: ActorsError[]; capped: boolean}> {
  const atOnce = dirs.flatMap((dir) => STATE_DIR_LOCKS.flatMap((name) => keptForEver(join(dir, name))))
  if (atOnce.length > 0) return {kept: atOnce, capped: false}
  const supervisors = new Map(dirs.map((dir) => [dir, provenSupervisorPid(dir)]))
  // A grace is one holder's, from the first time it is seen in any lock file: a crowd of commands taking a lock in
  // turn (70 controls of one Run) keeps none. And one clock bounds the whole wait: a Run that hands its locks from
  // holder to holder, or one holder from file to file, kept kill waiting for ever (red-team 14 N4-H1).
  const began = Date.now()
  const firstSeen = new Map<string, number>()
  const launches = new Set<number>()
  for (;;) {
    const held = dirs.flatMap((dir) => keptLocks(home, dir, supervisors.get(dir)))
    const kept = held.filter((lock) => !lock.watched)
    for (const lock of held) if (lock.watched) launches.add(lock.pid)
    // Only a launch being watched: looked at again until it lets go or is too old for one.
    if (kept.length === 0) {
      if (held.length === 0) return {kept: [], capped: launches.size > 0}
      if (launches.size >= LAUNCHES_IN_TURN || Date.now() - began >= ANY_LOCK_GRACE_MS) return {kept: [], capped: true}
    }
    const now = Date.now()
    const over = kept.filter((lock) => {
      const key = `${lock.pid}:${lock.start}`
      const since = firstSeen.get(key) ?? now
      firstSeen.set(key, since)
      return now - since >= lock.graceMs
    })
    if (over.length > 0 || (kept.length > 0 && now - began >= ANY_LOCK_GRACE_MS))
      return {
        kept: (over.length > 0 ? over : kept).map(
          (lock) =>
            new ActorsError(
              `${lock.file} is held by pid ${lock.pid}, ${lock.where}`,
              EXIT.failed,
              `remove the lock (rm "${lock.file}") once nothing of the Run is left`,
              {lock: lock.file, holder: {pid: lock.pid, start: lock.start}},
            ),
        ),
        capped: false,
      }
    await sleep(20)
  }
}

/** The lock `file` as kept for ever (its live holder runs no part of the kernel, or is stopped); none otherwise. */
function keptForEver(file: string): ActorsError[] {
  const holder = lockHolder(file)
  if (!holder || !isSameProcess(holder)) return []
  if (!runsThisKernel(holder.pid))
    return [
      new ActorsError(
        `${file} is held by pid ${holder.pid} (${commandOf(holder.pid)}), which is no process of actors`,
        EXIT.failed,
        `remove the lock (rm "${file}"); the Run may have written it`,
        {lock: file, holder},
      ),
    ]
  if (isStopped(holder.pid))
    return [
      new ActorsError(
        `${file} is held by pid ${holder.pid} (${commandOf(holder.pid)}), which is stopped`,
        EXIT.failed,
        `remove the lock (rm "${file}"), or resume pid ${holder.pid} (kill -CONT ${holder.pid})`,
        {lock: file, holder},
      ),
    ]
  return []
}

/** A lock held against the end; `watched`: an `actors run` that may still be launching, not (yet) kept. */
type KeptLock = {file: string; pid: number; start: string; where: string; graceMs: number; watched?: boolean}

/**
 * The locks of the state dir `dir` held by a live process, not the Run's
 * supervisor, and how long each may hold it: a process of this Run's own
 * unit or of another Run's, which takes none of this Run's locks for long,
 * OWN_LOCK_GRACE_MS (an `actors run` of the Run in its `.children.lock`:
 * see launchHolding); any other, ANY_LOCK_GRACE_MS.
 */
function keptLocks(home: string, dir: string, supervisor: number | undefined): KeptLock[] {
  let unit: number[] | undefined
  const kept: KeptLock[] = []
  for (const name of STATE_DIR_LOCKS) {
    const file = join(dir, name)
    const holder = lockHolder(file)
    // A holder gone is a stale lock, which the usual way breaks (its pid may be another process's by now).
    if (!holder || holder.pid === supervisor || !isSameProcess(holder)) continue
    const {pid, start} = holder
    unit ??= findUnitByFacts(dir, homeKey(home)).pids
    if (unit.includes(pid)) {
      // A child launched from inside (`actors run`) holds it for as long as its launch takes, and the end marks the
      // tree ending, which refuses the next launch: left to the end's own wait, for as long as a launch takes.
      if (name === '.children.lock' && isALaunch(pid)) {
        kept.push(launchHolding(file, pid, start))
        continue
      }
      kept.push({file, pid, start, where: 'a process of the Run itself', graceMs: OWN_LOCK_GRACE_MS})
    } else if (insideSomeRun(pid))
      kept.push({file, pid, start, where: `a process of another Run (${commandOf(pid)})`, graceMs: OWN_LOCK_GRACE_MS})
    else
      kept.push({
        file,
        pid,
        start,
        where: `for over ${ANY_LOCK_GRACE_MS / 1000}s (${commandOf(pid)})`,
        graceMs: ANY_LOCK_GRACE_MS,
      })
  }
  return kept
}

/**
 * An `actors run` of the Run holding its `.children.lock`, by its age: a
 * launch while young (watched: locksKeptFromTheEnd), kept at once from
 * LAUNCH_BOUND_MS (its age is its grace).
 */
function launchHolding(file: string, pid: number, start: string): KeptLock {
  const now = ticksSinceBoot()
  const ageMs = now === undefined ? Infinity : ((now - Number(start)) * 1000) / TICKS_PER_SECOND
  const where = `an \`actors run\` of the Run itself, started over ${LAUNCH_BOUND_MS / 1000}s ago (no launch takes that long)`
  return {file, pid, start, where, graceMs: 0, watched: ageMs < LAUNCH_BOUND_MS}
}

/**
 * Whether process `pid` is an `actors run`: Node running the kernel's own
 * script (`bin/actors`) with `run` as its command. Never a process renamed
 * as an ended supervisor, which launches nothing: that name alone passes for
 * the kernel, whatever script follows it (red-team 15 N5-M1).
 */
function isALaunch(pid: number): boolean {
  try {
    const args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')
    return args[0] !== ENDED_SUPERVISOR_TITLE && args[2] === 'run' && runsThisKernel(pid)
  } catch {
    return false
  }
}

/** Whether process `pid` runs in some Run's unit: a Run's cgroup on any hierarchy, or a Run's marker in its environment. */
function insideSomeRun(pid: number): boolean {
  if (inAnyRunCgroup(pid) === true) return true
  const environ = environOf(pid)
  return environ !== undefined && carriesARunsMarker(environ)
}

/** The pid of the Run's own supervisor, proven as readers prove one (records/supervisor-args.ts); undefined if none. */
function provenSupervisorPid(dir: string): number | undefined {
  try {
    const meta = readRunMetaRaw(dir)
    return meta && supervisorArgs(meta, dir) ? meta.process_identity?.pid : undefined
  } catch {
    return undefined
  }
}

/**
 * The identity a lock file names (a link whose target is the holder's
 * identity, or a file of the older kind), never read through a link, and
 * never blocking: a FIFO a Run put at its `.lock` held kill, stop and close
 * for ever.
 */
function lockHolder(file: string): ProcessIdentity | undefined {
  try {
    const stat = lstatSync(file)
    if (!stat.isSymbolicLink() && !stat.isFile()) return undefined
    const holder = JSON.parse(readLockText(file)) as Partial<ProcessIdentity>
    const {pid, start} = holder
    if (typeof pid !== 'number' || !Number.isInteger(pid) || pid < 1 || typeof start !== 'string') return undefined
    return {pid, start, ...(typeof holder.boot === 'string' ? {boot: holder.boot} : {})}
  } catch {
    return undefined
  }
}
