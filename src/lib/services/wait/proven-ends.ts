/**
 * A finished status is delivered only once the Run is gone (issue: a Run that
 * wrote its own `result.json`, or `status: done` into its run.json, was
 * delivered as "done, exit 0" while its command ran on). Both files are the
 * Run's to write; what it cannot write is whether a process of it is still
 * alive. So before a wait hands out an end, it looks once over /proc
 * (containment/unit-facts.ts liveStateDirs): while the Run's supervisor or a
 * process carrying its state dir lives, the end is a claim and the Run is
 * still live for this wait, and so is one whose cgroup (the one the kernel
 * named after it) still holds a process, which catches a process that
 * dropped its environment. The supervisor then records the real end over a
 * result it did not write (supervisor/supervise.ts). Processes the recorded
 * end itself names as left over (`leftover`) do not hold it back: the row
 * says they outlived it, and neither do processes in another Run's cgroup
 * (inRunsReach). A Slurm Run's commands run on its node: only its
 * supervisor is looked for here (a one-node cluster shows the job's
 * processes too, and those are Slurm's to end).
 */
import {liveStateDirs, ownCgroupTreeProcs} from '../../kernel/containment/unit-facts.js'
import {sameStateDir, stateDirKey} from '../../base/platform/home.js'
import {DEFAULT_EXECUTOR_KIND, isTerminal} from '../../base/records/run.js'
import {readRunResult} from '../../kernel/runs/store.js'
import {basename, dirname, join} from 'node:path'
import {readProcStat} from '../../base/platform/process-identity.js'
import {processEnvValue} from '../../base/platform/process-environ.js'
import {isOwnUnitCgroup} from '../../kernel/containment/proof.js'
import {runUnitName} from '../../kernel/containment/unit-path.js'
import {runCgroupOf} from '../../kernel/containment/caller-cgroup.js'
import {isAnotherRunsProcess} from '../../base/platform/process-tree.js'
import {supervisorOfProcess} from '../../base/records/supervisor-args.js'
import type {RunEntry} from './select.js'

/** Looks in a row that held an end back (see unprovenPollMs). */
let heldLooks = 0

/**
 * How long a wait sleeps before it looks again, having held back `held`
 * ends (undefined: none held). No doorbell rings when a supervisor exits, so
 * it polls: 10 ms at first (a supervisor leaves within milliseconds of
 * writing its end), doubling up to 1 s (a Run that wrote its own end and
 * runs on is not worth a busy loop).
 */
export function unprovenPollMs(held: number): number | undefined {
  if (held === 0) {
    heldLooks = 0
    return undefined
  }
  heldLooks = Math.min(heldLooks + 1, 8)
  return Math.min(1000, 5 * 2 ** heldLooks)
}

/**
 * Mark as live, in `runs`, every entry of `entries` that reads finished while
 * a process of it still lives (see the module comment). Returns how many.
 * Earlier generations (`archived`) are left as they are: a Run's current
 * generation is the one that runs.
 */
export function holdUnprovenEnds(runs: Map<string, RunEntry>, entries: readonly RunEntry[]): number {
  const finished = entries.filter((e) => !e.archived && isTerminal(e.meta.status))
  if (finished.length === 0) return 0
  const live = liveStateDirs()
  let held = 0
  for (const entry of finished) {
    const found = live.get(stateDirKey(entry.dir))
    // A job's processes run on its node: one seen here (a one-node cluster) may be Slurm's to end after the Run's end.
    const kind = (entry.meta.executor as {kind?: unknown} | undefined)?.kind
    const local = kind === undefined || kind === DEFAULT_EXECUTOR_KIND
    // Without a process naming it, a process of the Run that dropped its environment (`exec env -i`) is in its cgroup.
    const named = found
      ? [...found.supervisors, ...(local ? found.carriers : [])].filter((p) => inRunsReach(p, entry))
      : []
    const tree = named.length > 0 || !local ? undefined : unitCgroupMembers(entry)
    const pids = tree?.pids ?? named
    // A cgroup tree past the walk's bounds (a Run that made thousands below its own) is not proven empty.
    if (pids.length === 0 && tree?.complete !== false) continue
    // A supervisor that still runs as one has not recorded the end (it renames itself once it has): that end is not
    // its, whatever the result names as left over (a Run's own result listed its supervisor there).
    const supervising = found?.supervisors.some((pid) => pids.includes(pid)) === true
    const leftover = namedLeftover(entry)
    if (!supervising && tree?.complete !== false && pids.every((pid) => leftover.has(pid))) continue
    runs.set(entry.meta.run, {...entry, meta: {...entry.meta, status: 'running'}})
    held++
  }
  return held
}

/**
 * Whether `pid`, found naming the Run's state dir, may be the Run's: it is in
 * no Run's cgroup, or in the Run's own or its parent's (where its supervisor,
 * and a tracked Run nested in a cgroup Run, live). A process in another
 * Run's cgroup is that Run's (a sibling that put the dir in its environment,
 * or on a command line of its own, held this Run's end back for as long as
 * it lived), unless it carries this Run's own instance marker.
 */
function inRunsReach(pid: number, entry: RunEntry): boolean {
  const run = runCgroupOf(pid)
  const own = entry.meta.run_instance_id
  const parent = (entry.meta.parent as {run_instance_id?: unknown} | null | undefined)?.run_instance_id
  if (run === undefined) return !tiedToAnotherRun(pid, entry)
  if (run.instance === own || run.instance === parent) return true
  // Unless it carries this very Run's marker: a Run (as root) moved its own command into a sibling's cgroup,
  // kept its marker and wrote its own end, which was delivered while that command ran on.
  return processEnvValue(pid, 'ACTORS_RUN_INSTANCE') === own
}

/** How far up its parents a process in no Run's cgroup is followed (a Run's tree is rarely deeper). */
const MAX_ANCESTORS = 32

/**
 * Whether a process in no Run's cgroup (tracked containment, or the root
 * cgroup a root Run wrote it into) shows itself another Run's: its
 * environment names another Run that holds its instance, or a parent up the
 * line is another Run's supervisor, sits in another Run's cgroup, or is
 * another Run's by its environment. Such a process (a sibling that put this
 * Run's dir in its environment or on a node command line of its own) held
 * this Run's end back for as long as it lived. One that cut every tie
 * (a double fork, its environment forged whole) cannot be told from this
 * Run's own escaped process, and still holds the end: `control RUN kill`
 * ends it (docs/containment.md).
 */
function tiedToAnotherRun(pid: number, entry: RunEntry): boolean {
  const parent = entry.meta.parent as {run?: unknown; run_instance_id?: unknown} | null | undefined
  const ours = new Set([entry.meta.run_instance_id, parent?.run_instance_id])
  const ourDirs = [entry.dir, ...(typeof parent?.run === 'string' ? [join(dirname(entry.dir), parent.run)] : [])]
  if (isAnotherRunsProcess(pid, entry.dir)) return true
  let at = readProcStat(pid)?.ppid
  for (let hops = 0; at !== undefined && at > 1 && hops < MAX_ANCESTORS; hops++) {
    const supervisor = supervisorOfProcess(at)
    if (supervisor) return !ourDirs.some((dir) => sameStateDir(supervisor.dir, dir))
    const run = runCgroupOf(at)
    if (run) return !ours.has(run.instance)
    if (isAnotherRunsProcess(at, entry.dir)) return true
    at = readProcStat(at)?.ppid
  }
  return false
}

/** The pids the Run's recorded end names as outliving it. */
function namedLeftover(entry: RunEntry): Set<number> {
  try {
    const leftover = readRunResult(entry.dir, entry.meta)?.leftover
    if (!Array.isArray(leftover)) return new Set()
    return new Set(leftover.map((item) => (item as {pid?: unknown})?.pid).filter((pid) => typeof pid === 'number'))
  } catch {
    return new Set()
  }
}

/**
 * The live processes in the cgroup tree the kernel made for the Run
 * (run.json `containment.path`, proven by its name), the cgroups it made
 * below its own included; none without one. Runs it launched have cgroups
 * of their own below it, and may go on after its end: not its
 * (containment/unit-facts.ts ownCgroupTreeProcs).
 */
function unitCgroupMembers(entry: RunEntry): {pids: number[]; complete: boolean} {
  const path = (entry.meta.containment as {path?: unknown} | undefined)?.path
  if (typeof path !== 'string') return {pids: [], complete: true}
  if (!isOwnUnitCgroup(path, {unit: runUnitName(basename(entry.dir), entry.meta.run_instance_id)}))
    return {pids: [], complete: true}
  return ownCgroupTreeProcs(path, entry.dir, entry.meta.run_instance_id)
}
