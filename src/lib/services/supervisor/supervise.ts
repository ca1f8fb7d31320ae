/**
 * The detached supervisor: owns one Run's command from start to result.
 * It runs in its own small Node process (src/boot/supervisor.ts): nothing heavy, so node:child_process,
 * not execa (src/lib/base/platform/execa.ts: about 10 MB more per live Run, 40 ms more per start).
 *
 * Life of a Run here: start each step in its own process group with stdout
 * and stderr appended to the log files; enforce the timeout by terminating the
 * whole process tree (SIGTERM, then SIGKILL after kill_grace); retry failed
 * attempts; honour a stop/kill requested through run.json's `ending`; collect
 * artifacts; write result.json exactly once.
 */
import type {ChildProcess} from 'node:child_process'
import {childProcess} from '../../base/platform/builtins.js'
import {closeSync} from 'node:fs'
import {appendStateFile, openStateFile} from '../../base/platform/private-files.js'
import {dirname, join} from 'node:path'
import {afterRunEnded, followUpEndedRuns} from '../tree/after-run.js'
import {lockFreed, withLockSync} from '../../base/platform/file-lock.js'
import {isActorsError} from '../../base/platform/errors.js'
import {readProcessIdentity, ticksSinceBoot} from '../../base/platform/process-identity.js'
import {endUnit, openUnit, runMarkOf, runUnitOwner, type Leftover, type Unit} from '../../kernel/containment/index.js'
import {closeUnitIntoResult, commandStartError, makeRunUnit, sampleTrackedUsage} from './run-unit.js'
import {
  readRunMetaRaw,
  readRunResult,
  resultClaim,
  runFile,
  updateRunMeta,
  writeResultLocked,
} from '../../kernel/runs/store.js'
import {traceQuietly} from '../../kernel/runs/trace.js'
import {watchUntil} from '../../base/bell/watch-until.js'
import {budgetMark} from '../../kernel/runs/tree-limits.js'
import {releaseRunLocks, takeRunLocks} from '../../kernel/locks/run-locks.js'
import {executorOf} from '../../kernel/executors/index.js'
import {testHookPause} from '../../base/platform/test-hooks.js'
import {generationOf} from '../../base/records/generation-layout.js'
import {completeMove} from '../../kernel/runs/generation-move.js'
import {StdinPump} from './stdin-pump.js'
import {isNoRoomForLock, releaseEndReserve, settleUnstartedNoSpace, updateRunMetaOrNote} from './no-space.js'
import {commandEnvironment, resultOf, type AttemptOutcome, type StepOutcome} from './outcome.js'
import {runStepTree, type StepTreeHooks} from './step-tree.js'
import {type DirIdentity, dirIdentityOf, isSameDir, ownMeta, ownStateDir, runJsonDamage} from './own-dir.js'
import {isTerminal, type ChildProcessRecord, type RunMeta} from '../../base/records/run.js'
import {awaitAdoptedSteps, resumeOf, type AdoptLimit, type Resume} from './adopt-run.js'
import {liveRecordedCommands} from '../../kernel/containment/lost.js'
import {endRecordFile, endRecordTag} from '../../kernel/containment/end-record.js'
import {unlinkQuietly} from '../../base/platform/state-files.js'
import type {SupervisionHost} from './host-context.js'
import {ENDED_SUPERVISOR_TITLE, runsNode} from '../../base/platform/kernel-process.js'

class Supervisor {
  private readonly live = new Map<number, ChildProcess>()
  private records: ChildProcessRecord[] = []
  private timedOut = false
  private ending = false
  /** The tree's termination under way (timeout, stop): the result waits for it, so a reader never sees a finished Run with processes left. */
  private terminating: Promise<void> | undefined
  /** `inbox: stdin`: writes `actors send` messages to the running step's stdin. */
  private readonly pump: StdinPump | undefined
  /** The state dir this supervisor started with, whatever the Run renames it to or writes into it (own-dir.ts). */
  private readonly dirIdentity: DirIdentity | undefined
  /** Containment: every process of the Run, whatever it forks (lib/kernel/containment/). */
  private unit!: Unit
  /** Processes an end could not get rid of within kill_grace + 5 s (result.json `leftover`). */
  private leftover: Leftover[] = []
  /** The attempt under way (its steps' wrappers record their ends under it: end-record.ts). */
  private attempt = 0
  /** Taking over from a lost supervisor: the command processes it left running (adopt-run.ts). */
  private adopted: number[] = []
  /**
   * When this supervisor made the Run's unit (clock ticks since boot, a tick early): nothing of the Run is older.
   * Unknown to an adopter, whose Run started before it.
   */
  private unitMadeTicks: number | undefined
  /** When the attempt under way times out (ms since the epoch), 0 for never. */
  private deadline = 0

  constructor(
    private dir: string,
    private readonly home: string,
    private meta: RunMeta,
    /** Supervised inside the state root's host (host.ts), not a process of its own: its signals, env and end mark. */
    private readonly host?: SupervisionHost,
  ) {
    this.pump = meta.inbox === 'stdin' ? new StdinPump(dir, generationOf(meta)) : undefined
    this.dirIdentity = dirIdentityOf(dir)
  }

  /** [containment] Make the Run's unit before anything of it starts: its record (superviseRun writes it), or why not. */
  makeUnit(): Unit | string {
    const now = ticksSinceBoot()
    this.unitMadeTicks = now === undefined ? undefined : now - 1
    const unit = makeRunUnit(this.home, this.dir, this.meta, () => this.processQuery())
    if (typeof unit !== 'string') this.unit = unit
    return unit
  }

  /** [supervision] Take over the unit run.json records, and the command processes a lost supervisor left running. */
  adoptUnit(): void {
    this.records = liveRecordedCommands(this.meta, this.dir)
    this.adopted = this.records.map((r) => r.pid)
    this.unit = openUnit(this.meta.containment, () => this.processQuery(), runUnitOwner(this.dir, this.meta))
  }

  /**
   * Run the started Run (`started`: its run.json as the start wrote it) to its result; `unitError`: makeUnit's
   * refusal; `resume`: where a Run taken over from a lost supervisor is (its locks are held, its command runs).
   */
  async run(started: RunMeta, unitError: string | undefined, resume?: Resume): Promise<void> {
    this.meta = started
    const startedAt = new Date()
    const offSignals = this.listenForSignals()
    try {
      await this.runToEnd(unitError, startedAt, resume)
    } finally {
      offSignals()
    }
  }

  /** The signals sent to this supervisor end the Run as cancelled: its own process's, or the host's (host.ts). */
  private listenForSignals(): () => void {
    const onSignal = (signal: string) => {
      if (signal !== 'SIGHUP') this.terminateFromOutside(signal)
    }
    if (this.host) return this.host.onSignal(onSignal)
    process.on('SIGTERM', () => onSignal('SIGTERM'))
    process.on('SIGINT', () => onSignal('SIGINT'))
    process.on('SIGHUP', () => {})
    return () => {}
  }

  private async runToEnd(unitError: string | undefined, startedAt: Date, resume?: Resume): Promise<void> {
    if (unitError !== undefined) {
      this.appendStderr(`actors: ${unitError}\n`)
      await this.finish({exitCode: null, signal: null, timedOut: false, unitError}, 0, startedAt)
      return
    }
    const unit = this.unit
    const stopSampling = sampleTrackedUsage(unit)
    // A Run waiting for its locks is started as far as its launcher is concerned (it waits `queued`).
    if (Array.isArray(this.meta.locks) && this.meta.locks.length > 0) this.host?.started()
    // [locks] Recipe `locks` (src/lib/kernel/locks/run-locks.ts): wait as `queued` until all are held, then start.
    const locks = resume
      ? {status: 'held' as const}
      : await takeRunLocks(this.home, this.dir, this.meta, () => this.ending)
    // [inbox] stdin messages are written once the command runs (they wait in inbox.jsonl until then).
    void this.pump?.run()
    if (locks.status !== 'held') {
      this.pump?.close()
      if (locks.status === 'error') this.appendStderr(`actors: could not take the Run's locks: ${locks.message}\n`)
      await this.finish(
        {
          exitCode: null,
          signal: null,
          timedOut: false,
          lockError: locks.status === 'error' ? locks.message : undefined,
        },
        0,
        startedAt,
      )
      return
    }
    if (this.meta.locks) startedAt = new Date()
    if (resume) startedAt = new Date(Date.parse(this.meta.started_at ?? '') || Date.now())

    const maxAttempts = Math.max(1, this.meta.retry || 1)
    let attempt = resume ? resume.attempt - 1 : 0
    let outcome: AttemptOutcome = {exitCode: null, signal: null, timedOut: false}
    while (attempt < maxAttempts) {
      attempt++
      this.attempt = attempt
      this.timedOut = false
      const resumed = resume?.attempt === attempt ? resume : undefined
      if (!resumed) {
        const at = new Date().toISOString()
        updateRunMetaOrNote(this.dir, this.meta, 'the attempt', (meta) => ({
          ...meta,
          attempts: attempt,
          attempt_started_at: at,
        }))
        if (attempt > 1) this.trace('runtime.retry', `attempt ${attempt} of ${maxAttempts}`, {attempt})
      }
      outcome = await this.runAttempt(resumed)
      // A timed-out attempt ends once its whole tree is gone; a retry gets a termination of its own.
      await this.terminating
      this.terminating = undefined
      // [containment] An attempt ends with its unit empty; Runs it launched go on unless it timed out or is ending.
      if (this.unit.strays().length > 0) {
        this.terminating = this.terminateTree(!outcome.timedOut && !this.requestedEnding() && !this.ending)
        await this.terminating
        this.terminating = undefined
      }
      const requested = this.requestedEnding()
      if (requested || this.ending || outcome.lost) break
      if (outcome.exitCode === 0 && !outcome.timedOut) break
    }
    this.pump?.close()
    stopSampling()
    releaseRunLocks(this.dir, this.home, this.meta) // [locks] the command is done: the next waiter may start
    await this.finish(outcome, attempt, startedAt)
  }

  /** Run every step of the plan once (honouring sequence/parallel) under the timeout; `resume`: from a taken-over step. */
  private async runAttempt(resume?: Resume): Promise<AttemptOutcome> {
    const timeoutMs = this.meta.timeout_ms
    // Taken over: what is left of the attempt's timeout, until the deadline the reader proved.
    const leftMs = timeoutMs && resume ? Math.max(0, resume.deadline - Date.now()) : timeoutMs
    // Every step's wrapper carries the deadline, for whoever takes this Run over (run-deadline.ts).
    this.deadline = timeoutMs && leftMs !== undefined ? Date.now() + leftMs : 0
    const timer = timeoutMs
      ? setTimeout(() => {
          this.timedOut = true
          this.trace('runtime.timeout', `timed out after ${timeoutMs}ms`, {timeout_ms: timeoutMs})
          this.endTree()
        }, leftMs)
      : undefined
    try {
      const {mode, steps, tree} = this.meta.plan
      const taken = resume ? await this.takeOverSteps(resume) : undefined
      if (taken && 'outcome' in taken) return taken.outcome
      const first = taken?.next ?? 0
      if (tree) return {...(await runStepTree(tree, this.stepTreeHooks())), timedOut: this.timedOut} // repeat/use steps
      if (mode === 'parallel') {
        const outcomes = await Promise.all(steps.map((argv, index) => this.runStep(argv, index)))
        const failed = outcomes.find((o) => o.exitCode !== 0)
        return {...(failed ?? outcomes[0]), timedOut: this.timedOut}
      }
      let last: StepOutcome = {exitCode: 0, signal: null}
      for (const [index, argv] of steps.entries()) {
        if (index < first) continue
        // A Run paused between steps stays paused: the next step waits for resume.
        if (index > 0) await this.waitWhilePaused()
        if (this.timedOut || this.ending || this.requestedEnding()) break
        last = await this.runStep(argv, index)
        if (last.exitCode !== 0 || this.timedOut || this.ending || this.requestedEnding()) break
      }
      return {...last, timedOut: this.timedOut}
    } finally {
      if (timer) clearTimeout(timer)
    }
  }

  /**
   * [supervision] Wait out the steps a lost supervisor left running: the attempt's outcome when it ends with them
   * (a failure, the last step, a parallel plan, no recorded end), else the sequence's next step.
   */
  private async takeOverSteps(resume: Resume): Promise<{outcome: AttemptOutcome} | {next: number}> {
    const stopping = () => this.timedOut || this.ending || Boolean(this.requestedEnding())
    const taken = await awaitAdoptedSteps(this.unit, this.dir, this.meta, resume, stopping)
    const {mode, steps, tree} = this.meta.plan
    const next = Math.max(...resume.steps) + 1
    // A plan of repeat/use steps walked in the lost supervisor: where it was is not known, nor is its end.
    const lost = taken.lost || (tree !== undefined && taken.exitCode === 0)
    if (lost || tree || mode === 'parallel' || taken.exitCode !== 0 || next >= steps.length)
      return {outcome: {...taken, ...(lost ? {lost: true} : {}), timedOut: this.timedOut}}
    return {next}
  }

  /** How the walk of a plan with repeat/use steps (step-tree.ts) runs commands, pauses, stops and records. */
  private stepTreeHooks(): StepTreeHooks {
    return {
      runCommand: (step) => this.runStep(this.meta.plan.steps[step], step),
      argvOf: (step) => this.meta.plan.steps[step],
      stopping: () => this.timedOut || this.ending || Boolean(this.requestedEnding()),
      waitWhilePaused: () => this.waitWhilePaused(),
      trace: (kind, summary, data) => this.trace(kind, summary, data),
    }
  }

  private runStep(argv: string[], step: number): Promise<StepOutcome> {
    // Test-only: widen the window between the ending check and the spawn (see recordChild).
    testHookPause('spawnDelayMs', 10_000)
    const base = this.host?.env ?? process.env
    const env = {...commandEnvironment(this.meta, this.home, this.dir, base), ...this.unit.memberEnv()}
    // [supervision] The wrapper records the command's end in the state dir, for whoever takes over a lost supervisor.
    const key = {
      run_instance_id: this.meta.run_instance_id,
      generation: generationOf(this.meta),
      attempt: this.attempt,
      step,
    }
    const end = {
      file: endRecordFile(this.dir, step),
      tag: endRecordTag(key),
      deadline: this.deadline,
      timeoutMs: this.meta.timeout_ms ?? 0,
      killGraceMs: this.meta.kill_grace_ms,
    }
    unlinkQuietly(end.file)
    const wrapped = this.unit.wrap(argv, end)
    // Started through the cgroup's join wrapper: a missing command is found here, as spawn would.
    const missing = wrapped !== argv ? commandStartError(argv[0], env, this.meta.cwd) : undefined
    if (missing) {
      this.appendStderr(`actors: could not start ${JSON.stringify(argv[0])}: ${missing}\n`)
      return Promise.resolve({exitCode: 127, signal: null, spawnError: missing})
    }
    return new Promise((resolve) => {
      let out: number | undefined
      let err: number | undefined
      let child: ChildProcess
      try {
        // Private (0600), and never through a link planted in a log's place (named as the start failure).
        out = openStateFile(runFile(this.dir, 'stdout'), 'append')
        err = openStateFile(runFile(this.dir, 'stderr'), 'append')
        child = childProcess().spawn(wrapped[0], wrapped.slice(1), {
          cwd: this.meta.cwd,
          env,
          detached: true,
          stdio: [this.pump ? 'pipe' : 'ignore', out, err],
        })
      } catch (error) {
        if (out !== undefined) closeSync(out)
        if (err !== undefined) closeSync(err)
        resolve({exitCode: 127, signal: null, spawnError: (error as Error).message})
        return
      }
      closeSync(out)
      closeSync(err)
      let settled = false
      child.once('error', (error) => {
        if (settled) return
        settled = true
        this.appendStderr(`actors: could not start ${JSON.stringify(argv[0])}: ${error.message}\n`)
        resolve({exitCode: 127, signal: null, spawnError: error.message})
      })
      if (child.pid !== undefined) this.recordChild(child, step)
      this.host?.started()
      if (this.pump && child.stdin) this.pump.attach(child.stdin)
      child.once('exit', (code, signal) => {
        if (child.pid !== undefined) this.live.delete(child.pid)
        if (settled) return
        settled = true
        resolve({exitCode: code, signal})
      })
    })
  }

  private appendStderr(text: string): void {
    try {
      appendStateFile(runFile(this.dir, 'stderr'), text)
    } catch {}
  }

  private recordChild(child: ChildProcess, step: number): void {
    const pid = child.pid as number
    this.live.set(pid, child)
    const record: ChildProcessRecord = {pid, pgid: pid, identity: readProcessIdentity(pid), step}
    this.records = [...this.records.filter((r) => this.live.has(r.pid)), record]
    const records = this.records
    let ending = undefined as RunMeta['ending']
    updateRunMetaOrNote(this.dir, this.meta, "the command's pid", (meta) => {
      ending = meta.ending
      return {...meta, child_pid: records[0].pid, pgid: records[0].pgid, children_processes: records}
    })
    // A stop or kill that came while this step started found no process (it marks run.json under this lock): do it now.
    if (ending) this.endTree()
  }

  /** Resolve once run.json no longer says `paused` (woken by changes in the state dir). */
  private async waitWhilePaused(): Promise<void> {
    const paused = () => {
      try {
        const meta = readRunMetaRaw(this.dir)
        return meta?.status === 'paused' && !meta.ending
      } catch {
        return false
      }
    }
    if (!paused()) return
    this.trace('runtime.held', 'paused between steps; the next step starts on resume')
    await watchUntil(this.dir, paused, (still) => !still)
  }

  /** Whether a control asked this Run to end (stop → cancelled, kill → killed). */
  private requestedEnding(): RunMeta['ending'] {
    try {
      return readRunMetaRaw(this.dir)?.ending
    } catch {
      return undefined
    }
  }

  /** Every process of the Run as of now: the live steps, their groups, and whatever carries the Run's marker. */
  private processQuery() {
    return {
      rootPids: [...this.live.keys(), ...this.adopted.filter((pid) => this.records.some((r) => r.pid === pid))],
      pgids: this.records.map((r) => r.pgid),
      runInstanceId: this.meta.run_instance_id,
      stateDir: this.dir,
    }
  }

  /** Terminate the tree once, however many reasons come (a timeout, then a stop). */
  private endTree(): void {
    this.terminating ??= this.terminateTree()
  }

  /**
   * End the whole unit (lib/kernel/containment/): SIGTERM, SIGKILL after
   * kill_grace (at once for a kill), sweeping until no process of it is left;
   * what survives kill_grace + 5 s is named in result.json `leftover`.
   */
  private async terminateTree(spareNestedRuns = false): Promise<void> {
    const graceMs = this.requestedEnding()?.status === 'killed' ? 0 : this.meta.kill_grace_ms
    const mark = runMarkOf(this.dir, this.meta.run_instance_id, this.unitMadeTicks)
    const left = await endUnit(this.unit, graceMs, {spareNestedRuns, mark})
    for (const item of left) this.appendStderr(`actors: could not end pid ${item.pid} (${item.command})\n`)
    this.leftover = left
  }

  /** The supervisor itself was told to stop: end the Run as cancelled rather than orphaning it. */
  private terminateFromOutside(signal: string): void {
    if (this.ending) return
    this.ending = true
    // An executor may TERM the job at its time limit too (Slurm does): that is a timeout (failed), not a stop.
    const executor = executorOf(this.meta)
    if (signal === 'SIGTERM' && executor.supervisor.termIsTimeLimit(this.meta)) {
      this.timedOut = true
      this.trace('runtime.timeout', `the ${executor.kind} job reached its time limit`, {
        signal,
        executor: executor.kind,
      })
      this.endTree()
      return
    }
    this.trace('runtime.supervisor_signal', `supervisor received ${signal}`, {signal})
    updateRunMeta(this.dir, (meta) =>
      meta.ending ? undefined : {...meta, ending: {status: 'cancelled', at: new Date().toISOString(), by: signal}},
    )
    this.endTree()
  }

  private async finish(outcome: AttemptOutcome, attempts: number, startedAt: Date): Promise<void> {
    this.host?.started() // ended before any command started (a refused unit, a lock it could not take)
    this.dir = ownStateDir(this.dir, this.meta.run_instance_id, this.dirIdentity) ?? this.dir // moved (own-dir.ts)
    // In a host, the Run's lock is waited for without blocking: a lock the Run (or anyone) keeps stalls this end
    // alone, not every other Run's. Busy at its deadline: the sync take below answers the same, and is handled there.
    // A lock named for a process that runs no Node at all (a Run wrote pid 1's identity there) was taken by nobody:
    // the end is not held back for the lock's whole wait, the Run reading `running` with its command gone.
    const lock = {takenOnlyBy: runsNode}
    if (this.host) await lockFreed(runFile(this.dir, 'lock'), lock).catch(() => {})
    try {
      withLockSync(runFile(this.dir, 'lock'), () => this.recordEnd(outcome, attempts, startedAt), lock)
    } catch (error) {
      const keptLock = isActorsError(error) && error.details?.lock === runFile(this.dir, 'lock')
      if (!keptLock && !isNoRoomForLock(error)) throw error
      this.appendStderr(`actors: ${(error as Error).message}; the end is recorded without it\n`)
      this.recordEnd(outcome, attempts, startedAt)
    }
    afterRunEnded(this.home, this.meta)
  }

  /** Write the end, the Run's lock held or not to be had (a Run kept it past its wait, or left no inode to take it). */
  private recordEnd(outcome: AttemptOutcome, attempts: number, startedAt: Date): void {
    // Only into the dir it started with: not one the Run put in its place (a neighbour's, with a copy of this Run's
    // run.json in it), nor a link (own-dir.ts).
    if (this.dirIdentity && !isSameDir(this.dir, this.dirIdentity)) return
    const found = ownMeta(this.dir, this.meta.run_instance_id) ?? this.ownCopyOfDamagedRecord()
    if (!found) return // another Run's: left alone
    // Whose the end is, and whether it is delivered, are the launch's: run.json is the Run's to rewrite.
    const meta: RunMeta = {...found, owner: this.meta.owner, notification: this.meta.notification}
    // This supervisor writes its one result here: one found was the Run's (or a reader's misled by a forged identity).
    const claimed = resultClaim(this.dir, meta)
    releaseEndReserve(this.dir) // room for the end even on a disk the command's output filled (end-reserve.ts)
    const result = resultOf(meta, outcome, attempts, startedAt)
    let {status, reason} = result
    // [containment] Usage and the limit that ended it, read before the unit's cgroups go.
    // The directory the orphan look reads is the one the supervisor started the Run in, not run.json's now.
    const started = {...meta, cwd: this.meta.cwd}
    if (this.unit) reason = closeUnitIntoResult(this.unit, this.dir, this.leftover, result, started, this.unitMadeTicks)
    Object.assign(result, budgetMark(this.home, meta))
    // Trace first: once result.json exists the Run is finished and nothing more is written to it.
    if (claimed) this.trace('runtime.result_replaced', `replaced a result.json it did not write (${claimed})`)
    this.trace('runtime.ended', status, {status, exit_code: outcome.exitCode, reason})
    writeResultLocked(this.dir, meta, result, claimed !== undefined)
    // Written: a wait proving ends by live supervisors (wait/proven-ends.ts) need not wait out this one's exit. A host
    // lets go of the Run's state dir instead (host-context.ts): it goes on supervising others.
    if (this.host) this.host.ended()
    else process.title = ENDED_SUPERVISOR_TITLE
    this.meta = {...meta, status}
  }

  /**
   * This supervisor's own copy of the Run's record, when the run.json in the
   * dir it started with is unreadable (the Run made it oversized or truncated
   * it) or names another instance (the Run rewrote it): the end is still this
   * Run's, and writing it restores the Run's own run.json.
   */
  private ownCopyOfDamagedRecord(): RunMeta | undefined {
    // Without the dir's identity, a run.json of another instance may be another Run's own (a swap): left alone.
    const damage = this.dirIdentity ? runJsonDamage(this.dir, this.meta.run_instance_id) : undefined
    if (!damage) return undefined
    this.appendStderr(`actors: ${damage}; the end is recorded from the supervisor's own copy of it\n`)
    return this.meta
  }

  private trace(kind: string, summary: string, data?: unknown): void {
    traceQuietly(this.dir, this.meta, {kind, summary, data})
  }
}

/**
 * Entry point used by src/boot/supervisor.ts: supervise the Run in `dir` until it is terminal; `adopt`: take it
 * over from a lost supervisor (adopt-run.ts).
 */
export async function superviseRun(dir: string, adopt?: AdoptLimit, host?: SupervisionHost): Promise<void> {
  if (adopt) return adoptRun(dir, adopt)
  let meta = readRunMetaRaw(dir)
  // A generation move that crashed after its commit is finished before the new generation writes anything.
  if (meta?.generation_move) {
    completeMove(dir)
    meta = readRunMetaRaw(dir)
  }
  if (!meta) throw new Error(`${join(dir, 'run.json')}: missing`)
  // A Run that ended before its supervisor started (a Slurm job stopped while pending) is not run.
  if (readRunResult(dir, meta)) return
  const home = dirname(dirname(dir))
  const supervisor = new Supervisor(dir, home, meta, host)
  // [containment] The unit exists before anything of the Run starts; its record goes to run.json in the start's write.
  const unit = supervisor.makeUnit()
  let started: RunMeta | undefined
  try {
    // A host supervises a Run once: one whose start another supervisor recorded is refused (host.ts).
    host?.hold()
    started = updateRunMeta(dir, (current) => {
      host?.claim(current)
      return {
        ...current,
        // [locks] A Run waiting for its locks stays queued; run-locks.ts marks it running once it holds them.
        status: current.status === 'queued' && !current.waiting_for ? 'running' : current.status,
        started_at: current.started_at ?? (current.waiting_for ? undefined : new Date().toISOString()),
        pid: process.pid,
        process_identity: readProcessIdentity(process.pid),
        ...executorOf(current).supervisor.startFields(current),
        ...(typeof unit === 'string' ? {} : {containment: unit.record}),
      }
    })
  } catch (error) {
    // Not started: the unit goes, as it would never have been made.
    if (typeof unit !== 'string') unit.remove()
    if (settleUnstartedNoSpace(dir, error)) return // a full disk: `failed`, never `running` with no supervisor
    throw error
  }
  await supervisor.run(started ?? meta, typeof unit === 'string' ? unit : undefined)
  // Runs its reads settled on the way (a lost sibling, say): their follow-ups too.
  followUpEndedRuns()
}

/** Take over the Run in `dir`, whose supervisor was lost, to its result (a reader started this process to). */
async function adoptRun(dir: string, limit: AdoptLimit): Promise<void> {
  const recorded = readRunMetaRaw(dir)
  if (!recorded) throw new Error(`${join(dir, 'run.json')}: missing`)
  // A result.json under a run.json not finished is no end: a reader adopts a Run whose unit lives on after its
  // supervisor was killed, whatever result the Run wrote meanwhile (runs/store.ts reconcileLostRun); its end replaces it.
  if (isTerminal(recorded.status)) return
  // The timeout is the one the reader proved, never a longer one run.json now says (adopt-run.ts resumeOf).
  const resume = resumeOf(recorded, limit)
  const meta: RunMeta = {...recorded, timeout_ms: resume.timeoutMs}
  const supervisor = new Supervisor(dir, dirname(dirname(dir)), meta)
  supervisor.adoptUnit()
  traceQuietly(dir, meta, {kind: 'runtime.adopted', summary: 'a new supervisor took the Run over from a lost one'})
  await supervisor.run(meta, undefined, resume)
  followUpEndedRuns()
}
