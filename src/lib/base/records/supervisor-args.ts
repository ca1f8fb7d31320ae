/**
 * A Run's supervisor, told by its own process: node running this package's
 * `dist/supervisor.cjs DIR KIND GRACE_MS [OVERDUE_MS]`, as the local executor spawns it
 * (or `dist/supervisor.cjs --host HOME`, the state root's supervision host: supervision-host.ts)
 * and the Slurm batch script execs it. These are facts of the launch that a
 * Run cannot rewrite, unlike its run.json (issue: a Run that rewrote its
 * `executor` or `kill_grace_ms` steered where `kill` went, or how long `stop`
 * waited), and a process a Run starts cannot pass for one by its command
 * line alone: the program must be node (a Run that killed its supervisor and
 * recorded `exec -a node sh -c … dist/supervisor.cjs DIR` in its place was
 * never timed out).
 */
import {readFileSync, readlinkSync, realpathSync} from 'node:fs'
import {supervisorScript} from '../platform/package-root.js'
import {basename, isAbsolute, join, resolve} from 'node:path'
import {sameStateDir} from '../platform/home.js'
import {isSameProcess, type ProcessIdentity} from '../platform/process-identity.js'
import {processEnvValue} from '../platform/process-environ.js'
import {SUPERVISOR_INJECTING_ENV} from '../platform/kernel-process.js'
import {DEFAULT_EXECUTOR_KIND, type RunMeta} from './run.js'
import {hostHoldsDir} from './supervision-host.js'

/** How the supervisor script's path ends, whichever install of this package started it. */
const SUPERVISOR_SCRIPT_TAIL = '/dist/supervisor.cjs'

export interface SupervisorArgs {
  /**
   * The state dir it supervises, resolved. A host's (`--host HOME`) is its own dir in the root, never a Run's:
   * only supervisorArgs, which proves the Run it holds (supervision-host.ts), names that Run's dir instead.
   */
  dir: string
  /** A supervision host (`dist/supervisor.cjs --host HOME`): the state root, resolved. */
  host?: string
  /** The executor kind it runs as (`local`, `slurm`). */
  kind?: string
  /** The kill_grace of the launch, ms (absent for supervisors started without it). */
  killGraceMs?: number
  /**
   * How long after its own start the supervisor must have ended a Run with
   * a timeout (every attempt timed out and terminated, with room to spare);
   * absent for a Run without one. A reader that finds it still running past
   * this has a supervisor the Run holds, in whatever way (overdue.ts).
   */
  overdueAfterMs?: number
  /** Started to take over a Run whose supervisor was lost (`... OVERDUE_MS adopt`): its commands started before it. */
  adopt?: true
  /** The supervisor script's path, as given. */
  script: string
}

/**
 * A supervisor's launch arguments from its command line (NUL-split
 * /proc/PID/cmdline): the program, then straight away the absolute script
 * path and its arguments; undefined for anything else.
 */
export function parseSupervisorCommandLine(args: readonly string[]): SupervisorArgs | undefined {
  const [, script, dir, kind, graceText, overdueText, mode] = args
  if (!script || !isAbsolute(script) || !script.endsWith(SUPERVISOR_SCRIPT_TAIL) || !dir) return undefined
  // A host's per-Run facts are not on its command line: it runs local Runs only, their grace on each step's wrapper.
  if (dir === '--host')
    return kind
      ? {script, host: resolve(kind), dir: join(resolve(kind), 'supervision'), kind: DEFAULT_EXECUTOR_KIND}
      : undefined
  const grace = msArg(graceText)
  const overdue = msArg(overdueText)
  return {
    script,
    dir: resolve(dir),
    ...(kind ? {kind} : {}),
    ...(grace !== undefined ? {killGraceMs: grace} : {}),
    ...(overdue ? {overdueAfterMs: overdue} : {}),
    ...(mode === 'adopt' ? {adopt: true as const} : {}),
  }
}

function msArg(text: string | undefined): number | undefined {
  const ms = Number(text)
  return text && Number.isFinite(ms) && ms >= 0 ? ms : undefined
}

/** The launch arguments of live process `pid` when it is a supervisor: node, running the script (parseSupervisorCommandLine). */
export function supervisorOfProcess(pid: number, args?: readonly string[]): SupervisorArgs | undefined {
  let line = args
  let program: string
  try {
    line ??= readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')
    program = readlinkSync(`/proc/${pid}/exe`)
  } catch {
    return undefined
  }
  // Node's binary is `node` (`nodejs` on some distributions); a shell renamed by `exec -a` is still a shell here.
  if (!basename(program).startsWith('node')) return undefined
  return parseSupervisorCommandLine(line)
}

/**
 * The launch arguments of the supervisor run.json records for the Run in
 * `dir`, when that process is alive (identity checked), is a supervisor,
 * names this very state dir and is not a process of the Run (a stand-in its
 * command started and wrote into run.json); undefined otherwise.
 */
export function supervisorArgs(
  meta: Pick<RunMeta, 'process_identity' | 'run_instance_id' | 'children_processes'>,
  dir: string,
): SupervisorArgs | undefined {
  const identity = meta.process_identity
  if (!identity || !isSameProcess(identity)) return undefined
  // A process of the Run itself carries its instance marker, which no supervisor does (executors/supervisor-env.ts).
  if (processEnvValue(identity.pid, 'ACTORS_RUN_INSTANCE') === meta.run_instance_id) return undefined
  const args = supervisorOfProcess(identity.pid)
  if (!args) return undefined
  // The supervisor starts every command it records: one of them, or a process started after one, is a stand-in.
  // An adopter (supervise.ts adoptRun) came after the commands it took over, as readers start it; so may a process
  // the Run started, which must then be this very install's script with no code put into it.
  if (args.adopt ? !runsOwnSupervisorScript(identity.pid, args.script) : commandsBefore(meta, identity))
    return undefined
  // A host supervises the Runs whose state dirs it holds open (supervision-host.ts).
  if (args.host) return hostHoldsDir(identity.pid, args.host, dir) ? {...args, dir: resolve(dir)} : undefined
  return sameStateDir(args.dir, dir) ? args : undefined
}

/**
 * Whether process `pid` runs this install's own supervisor script (`script`,
 * from its command line) with nothing injected: a script a Run wrote at a
 * path ending in `dist/supervisor.cjs`, or the real one given NODE_OPTIONS
 * or LD_PRELOAD, is a stand-in.
 */
export function runsOwnSupervisorScript(pid: number, script: string): boolean {
  if (SUPERVISOR_INJECTING_ENV.some((name) => processEnvValue(pid, name) !== undefined)) return false
  try {
    return realpathSync(script) === realpathSync(supervisorScript())
  } catch {
    return false
  }
}

/**
 * Whether a recorded command process is `identity`'s process or started before it, or in the same clock tick (start
 * times in clock ticks: a command's wrapper and the process it starts can share one; a supervisor starts its first
 * command far later than that).
 */
function commandsBefore(meta: Pick<RunMeta, 'children_processes'>, identity: ProcessIdentity): boolean {
  const records = Array.isArray(meta.children_processes) ? meta.children_processes : []
  const start = Number(identity.start)
  return records.some((record) => {
    if (record?.pid === identity.pid) return true
    const recorded = Number(record?.identity?.start)
    return Number.isFinite(start) && Number.isFinite(recorded) && recorded <= start
  })
}

/**
 * The pids a sweep of the Run's processes leaves alone: its supervisor, once
 * proven (supervisorArgs). Never run.json's `pid` as written: a Run that
 * wrote its own command's pid there hid that command from every kill.
 */
export function supervisorExclusion(
  meta: Pick<RunMeta, 'process_identity' | 'run_instance_id' | 'children_processes'>,
  dir: string,
): number[] {
  const pid = meta.process_identity?.pid
  return pid !== undefined && supervisorArgs(meta, dir) ? [pid] : []
}
