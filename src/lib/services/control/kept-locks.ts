/**
 * The locks of a Run's state dir (and its live descendants') kept against its
 * end (end-first.ts): who holds each, how long each holder may, and when the
 * end stops waiting. Nothing here removes a lock; end-first breaks what this
 * names kept.
 */
import {lstatSync, readFileSync} from 'node:fs'
import {join} from 'node:path'
import {ActorsError, EXIT} from '../../base/platform/errors.js'
import {sleep} from '../../base/platform/sleep.js'
import {readLockText} from '../../base/platform/file-lock.js'
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
import {ENDED_SUPERVISOR_TITLE, runsThisKernel} from '../../base/platform/kernel-process.js'
import {commandOf} from '../../kernel/containment/unit.js'
import {homeKey} from '../../kernel/containment/index.js'
import {findUnitByFacts} from '../../kernel/containment/unit-facts.js'

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
export async function locksKeptFromTheEnd(
  home: string,
  dirs: string[],
): Promise<{kept: ActorsError[]; capped: boolean}> {
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
export function lockHolder(file: string): ProcessIdentity | undefined {
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
