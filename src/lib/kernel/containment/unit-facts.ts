/**
 * A Run's unit found from what the machine knows, not from its state dir
 * (issue: nothing in a state dir can block a kill, and a Run cannot hide by
 * deleting it). Every command a Run starts carries `ACTORS_STATE_DIR=<its
 * dir>` and `ACTORS_RUN_INSTANCE=<instance>` in its environment, and under
 * cgroup containment sits in the cgroup the kernel named after that
 * instance. So the unit of the Run in `dir` is: the processes whose
 * environment says that dir, their descendants, and every member of a cgroup
 * one of them is in that is named `actors/<home key>/<its instance>`.
 * A process that names another Run's dir is only ever itself found; another
 * Run's cgroup never qualifies, since its name is that Run's instance.
 */
import {readdirSync, readFileSync} from 'node:fs'
import {basename, dirname, join} from 'node:path'
import {readBoundedText} from '../../base/platform/state-files.js'
import {isNestedRunCgroup, procsOf, walkCgroups} from './cgroup-tree.js'
import {sleep, sleepSync} from '../../base/platform/sleep.js'
import {sameStateDir, stateDirKey} from '../../base/platform/home.js'
import {environOf, envKey, envValue, processEnvValue} from '../../base/platform/process-environ.js'
import {readProcStat} from '../../base/platform/process-identity.js'
import {findRunProcesses, signalPids} from '../../base/platform/process-tree.js'
import {unifiedCgroupDirOf} from './cgroup-fs.js'
import {CgroupUnit} from './cgroup-unit.js'
import {isOwnUnitCgroup} from './proof.js'
import {parseRunUnitName, runUnitName, unitAt} from './unit-path.js'
import {commandOf, type Leftover} from './unit.js'
import {parseSupervisorCommandLine, supervisorOfProcess} from '../../base/records/supervisor-args.js'
import {heldDirs} from '../../base/records/supervision-host.js'

export interface FoundUnit {
  /** Live processes of the unit now. */
  pids: number[]
  /** Its cgroups (proven by name), when it has any. */
  cgroups: string[]
}

/** Every pid in /proc but this process's. */
export function otherPids(): number[] {
  try {
    return readdirSync('/proc')
      .map(Number)
      .filter((pid) => Number.isInteger(pid) && pid !== process.pid)
  } catch {
    return []
  }
}

/** What is alive of the unit of the Run whose state dir is `dir` (see the module comment); one pass over /proc. */
export function findUnitByFacts(dir: string, homeKey: string): FoundUnit {
  const roots: number[] = []
  const cgroups = new Set<string>()
  for (const pid of otherPids()) {
    const environ = environOf(pid)
    if (!environ || envValue(environ, 'ACTORS_STATE_DIR') !== dir) continue
    roots.push(pid)
    const instance = envValue(environ, 'ACTORS_RUN_INSTANCE')
    const cgroup = instance ? unifiedCgroupDirOf(pid) : undefined
    if (cgroup && instance && isOwnUnitCgroup(cgroup, {unit: runUnitName(basename(dir), instance), homeKey}))
      cgroups.add(cgroup)
  }
  const pids = new Set(roots.length ? findRunProcesses({rootPids: roots, pgids: []}) : [])
  for (const path of cgroups) for (const pid of new CgroupUnit({kind: 'cgroup', path}).members()) pids.add(pid)
  return {pids: [...pids], cgroups: [...cgroups]}
}

/**
 * Whether `pid` is a process of the Run in `dir` by facts, not by a record:
 * its environment carries `ACTORS_STATE_DIR=dir` (every command of the Run
 * does), or it is a child of `supervisor`, the Run's own live supervisor,
 * or of any supervisor of this dir (the command it started, even after an
 * `exec env -i`). A pid and start
 * time in run.json prove only that a process is the same one, not whose it
 * is: any process's can be read from /proc and written there.
 */
export function isRunsProcess(pid: number, dir: string, supervisor?: number): boolean {
  const named = processEnvValue(pid, 'ACTORS_STATE_DIR')
  if (named !== undefined && named !== '' && stateDirKey(named) === stateDirKey(dir)) return true
  const parent = readProcStat(pid)?.ppid
  if (parent === undefined || parent <= 1) return false
  if (parent === supervisor) return true
  // The child of a supervisor of this very dir, whatever run.json now names (a Run may record a stand-in there).
  const args = supervisorOfProcess(parent)
  return args !== undefined && sameStateDir(args.dir, dir)
}

/** The live processes of one state dir (liveStateDirs). */
export interface LiveOfDir {
  /** Supervisors: `dist/supervisor.cjs DIR KIND` on their command line. */
  supervisors: number[]
  /** Processes whose environment carries `ACTORS_STATE_DIR=DIR` (every command of the Run does). */
  carriers: number[]
}

const SUPERVISOR_KEY = envKey('ACTORS_SUPERVISOR')

/**
 * Every state dir that a live process still belongs to, by stateDirKey; one
 * pass over /proc. A process belongs to the dir its environment names
 * (`ACTORS_STATE_DIR`) and a Run's supervisor to the dir its command line
 * names: facts a Run cannot rewrite for a process it did not start. This
 * process is left out.
 */
export function liveStateDirs(): Map<string, LiveOfDir> {
  const named = new Map<string, LiveOfDir>()
  const of = (dir: string): LiveOfDir => {
    const key = stateDirKey(dir)
    let entry = named.get(key)
    if (!entry) named.set(key, (entry = {supervisors: [], carriers: []}))
    return entry
  }
  for (const pid of otherPids()) {
    const environ = environOf(pid)
    const dir = environ && envValue(environ, 'ACTORS_STATE_DIR')
    if (dir) of(dir).carriers.push(pid)
    // Only the kernel starts a supervisor, always with ACTORS_SUPERVISOR=1 (executors/supervisor-env.ts): a process
    // whose environment lacks it is none, and its command line is not read. That halves this pass, which sits between
    // a command's end and the wait that delivers it. An environment this user cannot read proves nothing: read on.
    if (environ !== undefined && envValue(environ, SUPERVISOR_KEY) !== '1') continue
    try {
      const args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')
      const supervisor = parseSupervisorCommandLine(args) && supervisorOfProcess(pid, args)
      // A host (records/supervision-host.ts) supervises the state dirs of its root it holds open.
      if (supervisor?.host) for (const held of hostedDirs(pid, supervisor.host)) of(held).supervisors.push(pid)
      else if (supervisor) of(supervisor.dir).supervisors.push(pid)
    } catch {}
  }
  return named
}

/** The state dirs of the root `home` that host `pid` holds open (the Runs it supervises). */
function hostedDirs(pid: number, home: string): string[] {
  const runs = join(stateDirKey(home), 'runs')
  return heldDirs(pid).filter((dir) => dirname(dir) === runs)
}

/**
 * Stop the unit of the Run in `dir` as found by facts, as a stop would:
 * SIGTERM every process of it (thawed and continued, so a paused one hears
 * it), wait up to `graceMs` for them to end, then kill what is left
 * (killUnitByFacts). Returns the pids sent SIGTERM, those killed after the
 * grace, and any that could not be ended.
 */
export async function stopUnitByFacts(
  dir: string,
  homeKey: string,
  graceMs: number,
): Promise<{termed: number[]; killed: number[]; leftover: Leftover[]}> {
  const found = findUnitByFacts(dir, homeKey)
  if (found.pids.length > 0) {
    for (const path of found.cgroups) new CgroupUnit({kind: 'cgroup', path}).thaw()
    signalPids(found.pids, 'SIGTERM')
    signalPids(found.pids, 'SIGCONT')
    const deadline = Date.now() + graceMs
    while (Date.now() < deadline && findUnitByFacts(dir, homeKey).pids.length > 0) await sleep(50)
  }
  const {signalled, leftover} = killUnitByFacts(dir, homeKey)
  return {termed: found.pids, killed: signalled, leftover}
}

/** How long a kill by facts keeps sweeping before it names what is left. */
const FACTS_KILL_MS = 5000

/**
 * SIGKILL the unit of the Run in `dir` as found by facts, sweeping until a
 * sweep finds nothing (a process forked meanwhile is caught), and remove its
 * emptied cgroups. Returns the pids signalled and any that could not be ended.
 */
export function killUnitByFacts(dir: string, homeKey: string): {signalled: number[]; leftover: Leftover[]} {
  const signalled = new Set<number>()
  const cgroups = new Set<string>()
  const deadline = Date.now() + FACTS_KILL_MS
  for (;;) {
    const found = findUnitByFacts(dir, homeKey)
    for (const path of found.cgroups) cgroups.add(path)
    if (found.pids.length === 0) break
    for (const path of found.cgroups) new CgroupUnit({kind: 'cgroup', path}).kill()
    signalPids(found.pids, 'SIGKILL')
    for (const pid of found.pids) signalled.add(pid)
    if (Date.now() >= deadline) {
      const left = found.pids.map((pid) => ({pid, command: commandOf(pid)}))
      return {signalled: [...signalled], leftover: left}
    }
    sleepSync(20)
  }
  for (const path of cgroups) new CgroupUnit({kind: 'cgroup', path}).remove()
  return {signalled: [...signalled], leftover: []}
}

/**
 * The live processes of a Run whose end is recorded (the proof `wait` makes
 * before it delivers an end): its supervisor, the processes carrying its
 * state dir, and the members of the cgroup the kernel named after it
 * (`containment` as its run.json records it, proven by name), which catches
 * one that dropped its environment. None for a Run that really ended.
 * `live`: a liveStateDirs() taken already (a prune over many Runs reads
 * /proc once, not once per Run).
 */
export function livePidsOfEnded(
  dir: string,
  meta: {run_instance_id: string; containment?: unknown},
  live: ReadonlyMap<string, LiveOfDir> = liveStateDirs(),
): number[] {
  const named = live.get(stateDirKey(dir))
  const pids = new Set([...(named?.supervisors ?? []), ...(named?.carriers ?? [])])
  const path = (meta.containment as {path?: unknown} | undefined)?.path
  if (typeof path === 'string' && isOwnUnitCgroup(path, {unit: runUnitName(basename(dir), meta.run_instance_id)}))
    for (const pid of ownCgroupTreeProcs(path, dir, meta.run_instance_id).pids) pids.add(pid)
  return [...pids].filter((pid) => (readProcStat(pid)?.state ?? 'Z') !== 'Z')
}

/**
 * The live processes of the cgroup tree at `path`, the Run's in `dir`
 * (instance `instance`), but for Runs launched from inside it: they live on
 * there after their parent's end (their cgroups nest below it, their
 * supervisors sit in it), and are not its. A cgroup below it counts as a
 * nested Run's only when it is named after a Run of this state root that
 * holds that instance and names this Run as its parent: any other the Run
 * made is its own (cgroup-tree.ts). `complete` false: the walk reached its
 * bounds, and the caller counts the Run as live.
 */
export function ownCgroupTreeProcs(path: string, dir: string, instance: string): {pids: number[]; complete: boolean} {
  const parts = path.split('/')
  const key = unitAt(parts, parts.length - 1)?.homeKey
  const nested = (below: string): boolean => {
    const at = below.split('/')
    const unit = isNestedRunCgroup(below) ? unitAt(at, at.length - 1) : undefined
    const named = unit && unit.homeKey === key ? parseRunUnitName(unit.unit) : undefined
    if (!named) return false
    const meta = readJsonQuietly(join(dirname(dir), named.run, 'run.json'))
    const parent = meta?.parent as {run_instance_id?: unknown} | undefined
    return meta?.run_instance_id === named.instance && parent?.run_instance_id === instance
  }
  const walk = walkCgroups(path, nested)
  const anotherRunsSupervisor = (pid: number | undefined): boolean => {
    const supervisor = pid === undefined ? undefined : supervisorOfProcess(pid)
    return supervisor !== undefined && stateDirKey(supervisor.dir) !== stateDirKey(dir)
  }
  // A nested Run's supervisor, and its command between spawn and join (the join wrapper starts in the
  // supervisor's cgroup, this one, for a moment): that Run's, not this one's. A relaunch of a finished
  // parent was refused as still running when it looked in that moment.
  const pids = procsOf(
    walk.dirs,
    (pid) => !anotherRunsSupervisor(pid) && !anotherRunsSupervisor(readProcStat(pid)?.ppid),
  )
  return {pids, complete: walk.complete}
}

/** A small JSON document read as it is (undefined when absent, a link, oversized or not JSON). */
function readJsonQuietly(file: string): Record<string, unknown> | undefined {
  try {
    const text = readBoundedText(file, 1024 * 1024)
    const value: unknown = text === undefined ? undefined : JSON.parse(text)
    return value && typeof value === 'object' ? (value as Record<string, unknown>) : undefined
  } catch {
    return undefined
  }
}
