/**
 * Ending a Run (SPEC: Control, Containment): `stop` and `kill` of a live Run,
 * and of what is left of one whose end is already recorded. A tree's stop
 * shares one grace: every Run of it is signalled first, then each is waited
 * for, deepest first, until the grace that began with the first signal ends.
 */
import {noteEndedRun} from '../../base/records/ended-runs.js'
import {supervisorArgs, supervisorExclusion} from '../../base/records/supervisor-args.js'
import {withLockSync} from '../../base/platform/file-lock.js'
import {notifyStateChange} from '../../base/bell/notify.js'
import {isSameProcess} from '../../base/platform/process-identity.js'
import {signalPids} from '../../base/platform/process-tree.js'
import {endUnit, outsideUnit, runMarkOf} from '../containment/index.js'
import {livePidsOfEnded} from '../containment/unit-facts.js'
import {hostedKillGraceMs} from '../containment/run-deadline.js'
import {
  readRunMetaRaw,
  readRunResult,
  readRunState,
  runFile,
  settledResult,
  writeResultLocked,
  writeRunMetaLocked,
} from '../runs/store.js'
import {recordedKillGraceMs, isTerminal, type RunMeta, type TerminalStatus} from '../../base/records/run.js'
import {leftUnitOf, noteLeftUnit} from '../runs/left-unit.js'
import {awaitRunEnd} from '../runs/await-run.js'
import {askedFrom, type AskedFrom, controlEnding} from '../runs/end-request.js'
import {
  endedOutcome,
  actionResult,
  RESULT_WAIT_MS,
  requireLiveLocked,
  runQuery,
  runUnit,
  signalRun,
  trace,
  verifyCommandProcesses,
  type EndMode,
  type RuntimeActionResult,
} from './runtime-actions.js'

/** How endRun waits (a tree's stop: see the top of this file). */
export interface EndOptions {
  /** When the grace began (ms since the epoch): a stop waits what is left of it, not a whole kill_grace of its own. */
  graceFrom?: number
  /** Mark and signal, then return at once: the caller waits for the end later, with endRun again. */
  signalOnly?: boolean
}

/** The launch's kill grace, from the supervisor's command line, or a host's step wrapper's (run-deadline.ts). */
export function launchedKillGraceMs(meta: RunMeta, dir: string): number | undefined {
  const args = supervisorArgs(meta, dir)
  if (!args?.host) return args?.killGraceMs
  return hostedKillGraceMs(meta, dir, meta.process_identity!.pid)
}

/**
 * The sweep after the first signals (containment/ endUnit): wait out
 * the Run's kill_grace (stop; none for kill) while anything of the unit is
 * alive, then kill what is left or was forked meanwhile, until a sweep finds
 * nothing. Returns the pids still there kill_grace + 5 s on (normally none).
 */
async function sweepRun(meta: RunMeta, dir: string, mode: EndMode, graceFrom = Date.now()): Promise<number[]> {
  // The launch's grace, from the supervisor's command line while it lives: run.json's is the Run's to rewrite.
  const launched = launchedKillGraceMs(meta, dir)
  const fullMs = mode === 'kill' ? 0 : recordedKillGraceMs({kill_grace_ms: launched ?? meta.kill_grace_ms})
  const graceMs = Math.max(0, fullMs - (Date.now() - graceFrom))
  const left = await endUnit(runUnit(meta, dir), graceMs, {
    mark: runMarkOf(dir, meta.run_instance_id),
    onOutside: (found) => noteLeftUnit(dir, found), // named in result.json leftover by the supervisor
  })
  return left.map((item) => item.pid)
}

/**
 * End what is left of a Run recorded as ended: its supervisor vanished (SIGKILL,
 * OOM, reboot of the supervisor alone) and reconciliation settled it
 * `exited`, or the Run wrote its own end and killed its supervisor; either
 * way its command may still be running unsupervised. stop/kill then signal
 * exactly the processes that are verifiably the Run's (recorded identities,
 * the Run's instance marker in their environment, its proven cgroup); the
 * recorded status stays. Returns undefined when nothing of the Run is alive.
 */
export async function endLeftovers(home: string, dir: string, mode: EndMode): Promise<RuntimeActionResult | undefined> {
  const meta = readRunMetaRaw(dir)
  // Ended by its run.json, or by a result.json (one the Run wrote, its run.json still saying `running`).
  const ended = meta && (isTerminal(meta.status) ? meta.status : readRunResult(dir, meta)?.status)
  if (!meta || !ended) return undefined
  if (ended !== 'exited') return endForgedEnd(home, dir, meta, ended, mode)
  const unit = runUnit(meta, dir)
  const found = unit.members()
  if (found.length === 0) return undefined
  const signalled = [...found]
  if (mode === 'kill') unit.kill()
  else signalled.push(...unit.signal('SIGTERM'))
  if (mode === 'stop') unit.thaw()
  trace(dir, meta, `${mode}_leftovers`, {pids: signalled})
  const remaining = await sweepRun(meta, dir, mode)
  notifyStateChange(home)
  return actionResult(mode, meta, {
    status: ended,
    signalled: [...new Set([...signalled, ...remaining])],
    changed: false,
    settled: true,
    result: readRunResult(dir, meta) ?? null,
  })
}

/**
 * A Run whose end is recorded yet whose own processes run (it wrote its end
 * and killed its supervisor): they are SIGKILLed, stop or kill alike, as the
 * proof `wait` makes finds them (its own cgroup, not the Runs it launched,
 * which live on there after it). Undefined when none runs.
 */
function endForgedEnd(
  home: string,
  dir: string,
  meta: RunMeta,
  ended: string,
  mode: EndMode,
): RuntimeActionResult | undefined {
  // Its proven supervisor is spared, told to record the kill: a Run that wrote its own end had it killed as a
  // leftover, and the real end was never recorded.
  const spared = supervisorExclusion(meta, dir)
  const pids = livePidsOfEnded(dir, meta).filter((pid) => !spared.includes(pid))
  if (pids.length === 0) return undefined
  if (spared.length > 0) markKilled(dir)
  signalPids(pids, 'SIGKILL')
  trace(dir, meta, `${mode}_leftovers`, {pids})
  notifyStateChange(home)
  return actionResult(mode, meta, {
    status: ended,
    signalled: pids,
    changed: false,
    settled: true,
    result: readRunResult(dir, meta) ?? null,
  })
}

/** Mark run.json's `ending` as a kill by control, so a supervisor that lives records `killed`. */
function markKilled(dir: string): void {
  try {
    withLockSync(runFile(dir, 'lock'), () => {
      const meta = readRunMetaRaw(dir)
      if (meta && meta.ending?.status !== 'killed') writeRunMetaLocked(dir, {...meta, ending: controlEnding('killed')})
    })
  } catch {} // a run.json it cannot write: the kill goes on, and the supervisor records what it saw
}

/**
 * End a live Run: `stop` (SIGTERM the whole tree, SIGKILL what is left after
 * the Run's kill_grace; result `cancelled`) or `kill` (SIGKILL at once;
 * `killed`). run.json's `ending` tells the supervisor which status to record;
 * when no supervisor is left (a queued Run, or one that vanished) the result
 * is written here. Resolves once the result is written (bounded wait).
 * Exported for tree cascades: call it once per descendant Run.
 */
/** What markAndSignal did: the Run as marked, the pids signalled, and whether its supervisor will record the end. */
interface MarkedEnd {
  meta: RunMeta
  signalled: number[]
  supervised: boolean
}

/** Under the Run's lock: refuse a Run that is not live, mark its ending, then send the first signals. */
function markAndSignal(dir: string, mode: EndMode, from: AskedFrom): MarkedEnd {
  const status: TerminalStatus = mode === 'kill' ? 'killed' : 'cancelled'
  return withLockSync(runFile(dir, 'lock'), () => {
    const meta = requireLiveLocked(dir, mode)
    const live = verifyCommandProcesses(meta, dir)
    // A kill may overtake a stop in progress; a stop never downgrades a kill.
    const ending = meta.ending?.status === 'killed' ? meta.ending : controlEnding(status, from)
    const marked: RunMeta = {...meta, ending}
    // [locks] A queued Run whose supervisor waits for its locks ends through that supervisor too.
    const supervised = (meta.status !== 'queued' || meta.pid !== undefined) && isSameProcess(meta.process_identity)
    const query = runQuery(meta, dir, live)
    const unit = runUnit(meta, dir, live)
    // [containment] What carries the Run's marker outside its cgroup is killed below too: named in result.json leftover.
    const outside = outsideUnit(unit, runMarkOf(dir, meta.run_instance_id))
    if (outside.length > 0) marked.left_unit = [...leftUnitOf(meta), ...outside]
    // Marked before any signal: a caller inside the Run carries its marker, so the signals reach the caller too,
    // and one that died first left the Run ended as `failed` (signal), its stop unrecorded.
    if (supervised) writeRunMetaLocked(dir, marked)
    let signalled: number[] = []
    if (mode === 'kill') {
      signalled = [...signalRun(query, 'SIGKILL'), ...unit.members()]
      unit.kill()
    } else {
      signalled = [...signalRun(query, 'SIGTERM'), ...unit.signal('SIGTERM')]
      unit.thaw()
      signalRun(query, 'SIGCONT')
    }
    // Nobody will record the end: a queued Run, or a supervisor that is gone.
    if (!supervised)
      writeResultLocked(dir, marked, settledResult(marked, ending.status, ending.status === 'killed' ? 'kill' : 'stop'))
    return {meta: marked, signalled, supervised}
  })
}

/**
 * A Run that ended before this call could mark it, by a stop asked at or
 * after `graceFrom` (the first signal of the same tree's stop, normally):
 * that stop's outcome. Undefined for any other end, which stays a refusal.
 */
function endedByThisStop(dir: string, mode: EndMode, graceFrom: number | undefined): RuntimeActionResult | undefined {
  const state = graceFrom === undefined ? undefined : readRunState(dir)
  const ending = state?.meta.ending
  if (!state || !isTerminal(state.meta.status) || ending?.by !== 'control') return undefined
  return Date.parse(ending.at) >= (graceFrom as number) ? endedOutcome(state, mode) : undefined
}

export async function endRun(
  home: string,
  dir: string,
  mode: EndMode,
  options: EndOptions = {},
): Promise<RuntimeActionResult> {
  const state = readRunState(dir)
  // Read before the Run's lock: it reads other Runs' run.json (the caller's lineage).
  const from = state ? askedFrom(home, state.meta.run) : 'inside'
  let first: MarkedEnd
  try {
    first = markAndSignal(dir, mode, from)
  } catch (error) {
    const ended = endedByThisStop(dir, mode, options.graceFrom)
    if (ended) return ended
    throw error
  }
  trace(dir, first.meta, mode, {pids: first.signalled})
  notifyStateChange(home)
  // Its follow-ups (locks freed, queued siblings started) belong to the tree: the caller runs them (followUpEndedRuns).
  if (!first.supervised) noteEndedRun(home, first.meta)

  const remaining = options.signalOnly ? [] : await sweepRun(first.meta, dir, mode, options.graceFrom)
  const final = options.signalOnly ? readRunState(dir) : await awaitRunEnd(home, dir, RESULT_WAIT_MS)
  const settled = Boolean(final && isTerminal(final.meta.status))
  return actionResult(mode, first.meta, {
    status: final?.meta.status ?? first.meta.status,
    signalled: [...new Set([...first.signalled, ...remaining])],
    changed: true,
    settled,
    result: final?.result ?? null,
  })
}
