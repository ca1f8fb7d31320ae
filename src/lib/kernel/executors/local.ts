/**
 * The local executor: the supervisor is a detached process on this machine,
 * started by `run` and alive while its recorded process identity matches.
 */
import {childProcess} from '../../base/platform/builtins.js'
import {supervisorScript} from '../../base/platform/package-root.js'
import {readProcessIdentity} from '../../base/platform/process-identity.js'
import {supervisorArgs} from '../../base/records/supervisor-args.js'
import {SUPERVISOR_INJECTING_ENV} from '../../base/platform/kernel-process.js'
import {dropTestHooks} from '../../base/platform/test-hooks.js'
import {readRunMetaRaw, updateRunMeta} from '../runs/store.js'
import type {Executor, JobHost} from './executor.js'
import {supervisorEnvironment} from './supervisor-env.js'
import {endLostRunUnit, runsOnThisMachine} from '../containment/lost.js'
import type {AttemptLimit} from '../containment/run-deadline.js'
import {runCgroupOf} from '../containment/caller-cgroup.js'
import {letHeldSupervisorGo} from './held-supervisor.js'
import {adopterOverdueMs, aliveLongerThan, hostOverdue, overdueAfterMs} from './overdue.js'
import {hostedDeadline} from '../containment/run-deadline.js'
import {requireEnforceableLimits} from '../containment/limits.js'
import {liveRunUsage} from '../containment/live-usage.js'
import {recordedKillGraceMs, type RunMeta} from '../../base/records/run.js'
import type {SupervisorCheck} from '../../base/records/supervisor-check.js'
import {nodeOs} from '../../base/platform/builtins.js'
import {localVerbs} from './local-verbs.js'
import {takeOverLocalRun} from './take-over.js'
import {dirname} from 'node:path'
import {handOversDone, handsToHost, startHandOver} from './host-client.js'
import {ActorsError, EXIT} from '../../base/platform/errors.js'

/** How long a Run may sit with no supervisor identity recorded before we call it lost. */
export const LAUNCH_GRACE_MS = 30_000

/** Whether the local supervisor of a live Run is still there (a queued Run has none yet and is alive). */
function checkLocalSupervisor(meta: RunMeta, dir: string, hosts: readonly JobHost[]): SupervisorCheck {
  // A queued Run has no supervisor yet, unless one is waiting for the Run's locks ([locks]).
  if (meta.status === 'queued' && !meta.process_identity) return {alive: true}
  // On another machine (launched inside an engine's job, on its node) this /proc says nothing of it:
  // it lives as long as the job it was launched in, as that job's engine tells.
  if (!runsHere(meta, dir)) return hosts.map((host) => host.checkJobOf(meta)).find(Boolean) ?? {alive: true}
  if (meta.process_identity) return checkRecordedSupervisor(meta, dir)
  // Launched but the supervisor's identity was never recorded: lost only after a grace period.
  return Date.now() - Date.parse(meta.created_at) > LAUNCH_GRACE_MS ? lost() : {alive: true}
}

/**
 * Whether the process run.json records as the supervisor is one, of this
 * Run, and running: identity checked, node running the supervisor script
 * for this dir (records/supervisor-args.ts). Any other process there is
 * one the Run put in its place, and the Run is lost (taken over: take-over.ts). A
 * supervisor its Run holds is let go first (held-supervisor.ts); one still
 * there past the Run's timeout is held in a way that was not undone, and
 * the Run is ended as timed out (overdue.ts).
 */
function checkRecordedSupervisor(meta: RunMeta, dir: string): SupervisorCheck {
  const args = supervisorArgs(meta, dir)
  if (!args) return lost()
  const pid = meta.process_identity!.pid
  // A supervisor runs beside its Run's cgroup, never in it: one found there is a process the Run started.
  const cgroup = runCgroupOf(pid)
  if (cgroup?.instance === meta.run_instance_id) return lost()
  if (!letHeldSupervisorGo(pid, dir, cgroup !== undefined)) return lost()
  if (args.overdueAfterMs !== undefined && aliveLongerThan(pid, args.overdueAfterMs))
    return {alive: false, status: 'failed', reason: 'timeout'}
  // A host is judged by the deadline its step wrapper carries (overdue.ts hostOverdue).
  if (args.host && hostOverdue(hostedDeadline(meta, dir, pid)))
    return {alive: false, status: 'failed', reason: 'timeout'}
  return {alive: true}
}

/** Whether the Run is this machine's (containment/lost.ts runsOnThisMachine). */
function runsHere(meta: RunMeta, dir: string): boolean {
  return runsOnThisMachine(meta, dir, thisHost())
}

let host: string | undefined
/** This machine's name, read once (listings check every live Run). */
function thisHost(): string {
  host ??= nodeOs().hostname()
  return host
}

function killProcess(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL')
  } catch {}
}

function lost(): SupervisorCheck {
  return {alive: false, status: 'exited', reason: 'supervisor_lost'}
}

/**
 * Spawn a detached supervisor for the Run in `dir`; `adopt`: one that takes
 * over a Run whose supervisor was lost (take-over.ts), its command running,
 * under the attempt's limit as the reader proved it (run-deadline.ts).
 */
function spawnSupervisor(home: string, dir: string, meta: Partial<RunMeta>, adopt?: AttemptLimit) {
  // The parent the launch recorded, read before the Run's command first runs (runs/children.ts launchedUnder). An
  // adopter starts long after, from a run.json the Run may have rewritten: it names no parent.
  const env = supervisorEnvironment(home, adopt ? undefined : (meta as RunMeta).parent?.run_instance_id)
  // A supervisor starting a queued Run passes on no fault meant for itself.
  if (process.env.ACTORS_SUPERVISOR === '1') dropTestHooks(env)
  // The launch's kill_grace rides in the command line, where the Run cannot rewrite it (records/supervisor-args.ts).
  const grace = String(recordedKillGraceMs(meta))
  // So is the time by which a Run with a timeout must have ended, for readers to enforce (overdue.ts); an adopter's
  // also carries the proven deadline and timeout it enforces (`... OVERDUE adopt DEADLINE TIMEOUT`).
  const overdue = adopt ? adopterOverdueMs(meta as RunMeta, adopt) : overdueAfterMs(meta as RunMeta)
  const limit = adopt ? [String(adopt.deadline ?? 0), String(adopt.timeoutMs ?? 0)] : []
  const tail = adopt ? [String(overdue ?? 0), 'adopt', ...limit] : overdue ? [String(overdue)] : []
  // An adopter is proven with neither (records/supervisor-args.ts): a process of the Run could inject code with them.
  if (adopt) for (const name of SUPERVISOR_INJECTING_ENV) delete env[name]
  // node:child_process, not execa (src/lib/base/platform/execa.ts): this is every launch's path, and evaluating execa
  // would add about 40 ms to `actors run -- true`, as much as Node's own start.
  const child = childProcess().spawn(process.execPath, [supervisorScript(), dir, 'local', grace, ...tail], {
    detached: true,
    stdio: 'ignore',
    env,
  })
  child.unref()
  const pid = child.pid
  if (pid === undefined) throw new Error(`could not start the supervisor for ${dir}`)
  return {pid, identity: readProcessIdentity(pid)}
}

/**
 * Start the detached supervisor for the Run in `dir` (fresh, or queued and now
 * allowed to run) and record its pid and process identity in run.json.
 */
function startLocalSupervisor(home: string, dir: string): number {
  const {pid, identity} = spawnSupervisor(home, dir, readRunMetaRaw(dir) ?? {})
  // Not fsynced: after a crash of the machine this pid and identity name nothing, and a Run whose
  // identity was never recorded is settled as lost after the launch grace (checkLocalSupervisor).
  updateRunMeta(
    dir,
    (meta) => ({
      ...meta,
      status: meta.status === 'queued' && !meta.waiting_for ? 'running' : meta.status, // [locks] still waiting for its locks
      pid: meta.pid ?? pid,
      process_identity: meta.process_identity ?? identity,
    }),
    {durable: false},
  )
  return pid
}

/**
 * Await the Runs this process handed to the host: each one's supervisor pid
 * (the host's), by state dir. A host that could not be reached at all never
 * had the Run: it gets a supervisor of its own, as without the host. A
 * refusal is the launch's failure (exit 1), naming the Run and the reason.
 */
export async function finishHandOvers(): Promise<Map<string, number>> {
  const pids = new Map<string, number>()
  for (const [dir, result] of await handOversDone()) {
    if ('pid' in result) pids.set(dir, result.pid)
    else if ('unreached' in result) {
      // Said once per launch, so a damaged state root does not make every Run cost a supervisor of its own unseen.
      if (result.damage) process.stderr.write(`actors: no supervision host can start: ${result.damage}\n`)
      pids.set(dir, startLocalSupervisor(dirname(dirname(dir)), dir))
    } else
      throw new ActorsError(
        `the supervision host refused ${dir}: ${result.refused}`,
        EXIT.failed,
        "see the Run's stderr.log; set ACTORS_SUPERVISION=run to give each Run a supervisor of its own",
      )
  }
  return pids
}

/** Take over a lost local Run on this machine (take-over.ts); the caller holds the Run's lock. */
function takeOverLocal(meta: RunMeta, dir: string) {
  if (!runsHere(meta, dir)) return undefined
  const home = dirname(dirname(dir))
  return takeOverLocalRun(
    meta,
    dir,
    (limit) => spawnSupervisor(home, dir, meta, limit),
    () => spawnSupervisor(home, dir, meta),
  )
}

/** A lost local Run's unit ended (SPEC: Containment): its usage and whatever could not be ended, as result.json fields. */
function endLostLocalRun(meta: RunMeta, dir: string): Record<string, unknown> {
  // A supervisor still proven here is an overdue one its Run holds (checkRecordedSupervisor): it goes first, so
  // that it never wakes to act on a Run already ended (a frozen one dies as it thaws). A host held past a Run's
  // deadline goes too: its other Runs are taken over as after any host's death, none is left to a held host.
  if (supervisorArgs(meta, dir)) killProcess(meta.process_identity!.pid)
  const {leftover, usage} = endLostRunUnit(meta, dir, thisHost())
  return {
    ...(usage ? {resources: {cpu_seconds: usage.cpu_seconds, peak_memory_bytes: usage.peak_memory_bytes}} : {}),
    ...(leftover.length > 0 ? {leftover} : {}),
  }
}

/**
 * The local executor (see executor.ts): everything happens on this machine,
 * watched by file notifications. `hosts` (registry.ts): the engines whose
 * jobs can hold a local Run launched inside them.
 */
export function localExecutorWith(hosts: readonly JobHost[]): Executor {
  return {
    kind: 'local',
    recipeOptions: () => ({}),
    // A local Run launched inside an engine's job records that job: it lives on the job's node, and no longer than the job.
    choose: (_recipe, env) => Object.assign({kind: 'local'}, ...hosts.map((host) => host.jobOf(env))),
    // Limits need a cgroup: refused where none can be made (tracked containment).
    preflight: requireEnforceableLimits,
    startsQueued: false,
    // Handed to the state root's host when `actors run` asked for it (host-client.ts): awaited by finishHandOvers.
    start: (home, dir) => {
      if (!handsToHost()) return {pid: startLocalSupervisor(home, dir)}
      startHandOver(home, dir)
      return {pid: null}
    },
    handedOver: () => false,
    check: (meta, dir) => checkLocalSupervisor(meta, dir, hosts),
    endLost: endLostLocalRun,
    takeOver: takeOverLocal,
    // The Run's cgroup counters, or its recorded command processes (tracked).
    usage: liveRunUsage,
    pollMs: () => undefined,
    relay: () => undefined,
    ...localVerbs,
    describe: () => '',
    queuedWhy: () => undefined,
    supervisor: {
      startFields: () => ({host: thisHost()}),
      termIsTimeLimit: () => false,
      ending: () => undefined,
    },
  }
}
