/**
 * The kernel's own actions on a Run's processes: pause and resume here, and
 * what stop and kill (end-run.ts) share with them.
 *
 * Every action first checks, under the Run's lifecycle lock (the lock the
 * supervisor takes to write the result), that the Run is live and that each
 * recorded command process is still the process it was: a recorded pid that
 * is alive with another start time is a recycled pid, and the whole action
 * is refused (exit 3) with nothing signalled. Only then are signals sent, to
 * the verified processes' groups and to every process of the Run found in the
 * process table (setsid'd and re-parented descendants included).
 */
import {supervisorArgs, supervisorExclusion} from '../../base/records/supervisor-args.js'
import {notActiveError} from '../../base/platform/errors.js'
import {withLockSync} from '../../base/platform/file-lock.js'
import {sleepSync} from '../../base/platform/sleep.js'
import {notifyStateChange} from '../../base/bell/notify.js'
import {isSameProcess, ledGroups, readProcStat, readProcessIdentity} from '../../base/platform/process-identity.js'
import {
  findRunProcesses,
  isAnotherRunsProcess,
  signalPids,
  type RunProcessQuery,
} from '../../base/platform/process-tree.js'
import {openUnit, outsideUnit, runMarkOf, runUnitOwner, type RunMark, type Unit} from '../containment/index.js'
import {isRunsProcess} from '../containment/unit-facts.js'
import {readRunMetaRaw, readRunResult, readRunState, runFile, writeRunMetaLocked, type RunState} from '../runs/store.js'
import {isTerminal, type ChildProcessRecord, type RunMeta} from '../../base/records/run.js'
import {traceQuietly} from '../runs/trace.js'

export type EndMode = 'stop' | 'kill'

/** What a runtime action did, for the command's output. */
export interface RuntimeActionResult {
  action: 'pause' | 'resume' | 'stop' | 'kill'
  run: string
  run_instance_id: string
  status: string
  /** Processes signalled (pids). */
  signalled: number[]
  /** False when the Run was already in the requested state. */
  changed: boolean
  /** stop/kill: whether the result was written before we returned. */
  settled?: boolean
  result?: RunState['result'] | null
}

/** The report of `action` on the Run of `meta`: what it did (`did`), after the Run's id and instance. */
export function actionResult(
  action: RuntimeActionResult['action'],
  meta: Pick<RunMeta, 'run' | 'run_instance_id'>,
  did: Omit<RuntimeActionResult, 'action' | 'run' | 'run_instance_id'>,
): RuntimeActionResult {
  return {action, run: meta.run, run_instance_id: meta.run_instance_id, ...did}
}

/** What a stop or kill reports for a Run found already ended (by that stop, or by one that reached it first). */
export function endedOutcome(state: RunState, mode: EndMode): RuntimeActionResult {
  return actionResult(mode, state.meta, {
    status: state.meta.status,
    signalled: [],
    changed: true,
    settled: true,
    result: state.result ?? null,
  })
}

/** Time we give the supervisor to record the result after its command is gone. */
export const RESULT_WAIT_MS = 5000

/** The recorded command processes of a Run (older run.json files only have child_pid/pgid). */
function commandRecords(meta: RunMeta): ChildProcessRecord[] {
  if (Array.isArray(meta.children_processes)) return meta.children_processes
  if (typeof meta.child_pid === 'number') return [{pid: meta.child_pid, pgid: meta.pgid ?? meta.child_pid, step: 0}]
  return []
}

/**
 * The recorded command processes that are alive and verifiably the same
 * process. A dead record is skipped; a live pid whose identity does not match
 * (or cannot be checked) refuses the whole action, naming the pid. A live
 * one that is no process of the Run (another Run's, or one the Run named by
 * writing its run.json) is skipped, and pushed onto `strangers` if given.
 */
export function verifyCommandProcesses(meta: RunMeta, dir?: string, strangers?: number[]): ChildProcessRecord[] {
  const live: ChildProcessRecord[] = []
  // The supervisor's children are the Run's: only while that supervisor lives and names this dir.
  const supervisor = dir !== undefined && supervisorArgs(meta, dir) ? meta.process_identity?.pid : undefined
  for (const record of commandRecords(meta)) {
    if (!record || !Number.isInteger(record.pid) || record.pid <= 1) continue
    // A record copied from a sibling's run.json names a real, verifiable process: it is still not this Run's.
    if (dir !== undefined && isAnotherRunsProcess(record.pid, dir)) {
      strangers?.push(record.pid)
      continue
    }
    const now = readProcessIdentity(record.pid)
    if (!now) continue
    if (!record.identity || !isSameProcess({...record.identity, pid: record.pid})) {
      throw notActiveError(
        `Run ${meta.run}: pid ${record.pid} is alive but is not the process recorded in run.json (identity mismatch); nothing was signalled`,
        'the recorded process is gone and its pid was reused; check the Run with `actors inspect`',
        {pid: record.pid},
      )
    }
    // The same process, but is it this Run's? A record can name any process whose pid and start time are readable.
    if (dir !== undefined && !isRunsProcess(record.pid, dir, supervisor)) {
      strangers?.push(record.pid)
      continue
    }
    live.push(record)
  }
  return live
}

/** The process-table query for a Run whose command processes were just verified. */
export function runQuery(meta: RunMeta, dir: string, live: ChildProcessRecord[]): RunProcessQuery {
  return {
    rootPids: live.map((r) => r.pid),
    pgids: ledGroups(live),
    runInstanceId: meta.run_instance_id,
    stateDir: dir,
    exclude: supervisorExclusion(meta, dir),
  }
}

/**
 * The query for the sweep after the first signals: only records whose process
 * is still verifiably the same (a pid or group id that was freed meanwhile is
 * never signalled), plus the environment marker that every descendant carries.
 */
function sweepQuery(meta: RunMeta, dir: string): RunProcessQuery {
  const supervisor = supervisorArgs(meta, dir) ? meta.process_identity?.pid : undefined
  const still = commandRecords(meta).filter(
    (r) => r?.identity && isSameProcess({...r.identity, pid: r.pid}) && isRunsProcess(r.pid, dir, supervisor),
  )
  return runQuery(meta, dir, still)
}

/**
 * Signal verified groups (not our own), then each process found afterwards
 * (members that left the groups, or appeared meanwhile). Returns the pids
 * signalled: those found before the group signal (which may have ended them
 * at once) and after it.
 */
export function signalRun(query: RunProcessQuery, signal: NodeJS.Signals): number[] {
  const before = findRunProcesses(query)
  const ownGroup = readProcStat(process.pid)?.pgid
  for (const group of new Set(query.pgids)) {
    if (group === ownGroup) continue
    try {
      process.kill(-group, signal)
    } catch {}
  }
  const after = findRunProcesses(query)
  signalPids(after, signal)
  return [...new Set([...before, ...after])]
}

/**
 * The Run's unit (run.json `containment`; lib/kernel/containment/): its cgroup,
 * or, tracked, the processes the verified records and the marker lead to
 * (re-verified on every sweep, so a freed pid is never signalled).
 */
export function runUnit(meta: RunMeta, dir: string, live?: ChildProcessRecord[]): Unit {
  return openUnit(
    meta.containment,
    () => (live ? runQuery(meta, dir, live) : sweepQuery(meta, dir)),
    runUnitOwner(dir, meta),
  )
}

/**
 * Pause or resume the whole unit: a cgroup freezes at once; a tracked unit is
 * stopped sweep by sweep until stable. [containment] What carries the Run's
 * marker outside its unit (a root Run's helper that wrote itself into
 * another cgroup) is stopped before the freeze and continued after the thaw,
 * as a kill's marker sweep ends it: left running, it thawed the Run's cgroup
 * while the Run read `paused`.
 */
function freezeOrThaw(unit: Unit, action: 'pause' | 'resume', mark: RunMark): number[] {
  const members = unit.members()
  const outside = new Set<number>()
  const outsiders = () => outsideUnit(unit, mark).map((item) => item.pid)
  if (action === 'pause') {
    // Again while new carriers appear: one may have thawed the cgroup before its stop landed.
    for (let round = 0; round < 3; round++) {
      const fresh = outsiders().filter((pid) => !outside.has(pid))
      signalPids(fresh, 'SIGSTOP')
      for (const pid of fresh) outside.add(pid)
      unit.freeze()
      if (fresh.length === 0) break
    }
  } else {
    unit.thaw()
    // Members too: a step's wrapper the pause stopped (SIGSTOP) on its way into the cgroup stays stopped through a thaw.
    for (const pid of [...unit.members(), ...outsiders()]) outside.add(pid)
    signalPids([...outside], 'SIGCONT')
  }
  return [...new Set([...members, ...outside, ...unit.members()])]
}

export function trace(dir: string, meta: RunMeta, action: string, data: Record<string, unknown>): void {
  traceQuietly(dir, meta, {kind: 'runtime.control', summary: action, data: {action, ...data}})
}

/** Read run.json under the lock and refuse a Run that is finished or ending (exit 3). */
export function requireLiveLocked(dir: string, verb: string): RunMeta {
  const meta = readRunMetaRaw(dir)
  if (!meta) throw notActiveError(`no Run in ${dir}`)
  const result = readRunResult(dir, meta)
  const status = result?.status ?? meta.status
  if (isTerminal(status))
    throw notActiveError(
      `Run ${meta.run} is ${status}; cannot ${verb} it`,
      `start it again with \`actors run\`, or inspect it with \`actors inspect ${meta.run}\``,
    )
  return meta
}

/** How long a pause waits for a starting Run's (or the next step's) command to appear. */
const PAUSE_START_WAIT_MS = 3000

/**
 * Pause (SIGSTOP) or resume (SIGCONT) a live Run's whole process tree and
 * record `paused` / `running` in run.json, all under the lifecycle lock so
 * the supervisor cannot write its result in between. A pause that finds no
 * command process yet (the Run was launched a moment ago, or is between
 * steps) waits briefly for it; a resume needs no process, since a supervisor
 * holding the next step only waits for run.json to say `running` again.
 */
export function pauseOrResumeRun(home: string, dir: string, action: 'pause' | 'resume'): RuntimeActionResult {
  readRunState(dir) // reconcile first: a Run whose supervisor vanished is settled, not paused
  const deadline = Date.now() + PAUSE_START_WAIT_MS
  let outcome: {meta: RunMeta; signalled: number[]; changed: boolean} | undefined
  for (;;) {
    outcome = withLockSync(runFile(dir, 'lock'), () => {
      const meta = requireLiveLocked(dir, action)
      if (meta.status === 'queued')
        throw notActiveError(
          `Run ${meta.run} is queued; it has no process to ${action} yet`,
          `wait until it runs, or stop it: actors control ${meta.run} stop`,
        )
      if (meta.ending)
        throw notActiveError(`Run ${meta.run} is being ${meta.ending.status === 'killed' ? 'killed' : 'stopped'}`)
      const strangers: number[] = []
      const live = verifyCommandProcesses(meta, dir, strangers)
      if (live.length === 0 && action === 'pause') {
        // Already paused and holding its next step: nothing to stop.
        if (meta.status === 'paused') return {meta, signalled: [], changed: false}
        if (Date.now() < deadline && isSameProcess(meta.process_identity)) return undefined
        if (strangers.length > 0)
          throw notActiveError(
            `Run ${meta.run}: ${runFile(dir, 'meta')} names pid ${[...new Set(strangers)].join(', ')} as its command, which is no process of this Run; nothing was signalled`,
            `the Run may have written that itself: inspect it (actors inspect ${meta.run}), or end it by its unit (actors control ${meta.run} stop)`,
          )
        throw notActiveError(
          `Run ${meta.run} has no live command process to pause right now`,
          'it is between steps or ending; retry in a moment',
        )
      }
      const mark = runMarkOf(dir, meta.run_instance_id)
      const signalled = live.length === 0 ? [] : freezeOrThaw(runUnit(meta, dir, live), action, mark)
      const wanted = action === 'pause' ? 'paused' : 'running'
      const changed = meta.status !== wanted
      const next: RunMeta = {...meta, status: wanted}
      if (action === 'pause') next.paused_at = new Date().toISOString()
      else delete next.paused_at
      writeRunMetaLocked(dir, next)
      return {meta: next, signalled, changed}
    })
    if (outcome) break
    sleepSync(20)
  }
  trace(dir, outcome.meta, action, {pids: outcome.signalled})
  notifyStateChange(home)
  const {meta, signalled, changed} = outcome
  return actionResult(action, meta, {status: meta.status, signalled, changed})
}
