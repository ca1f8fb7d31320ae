/**
 * Whether a process may be one a live Run cut loose (SPEC: Containment;
 * red-team 12 N2-H1). Under tracked containment a Run's helper that does
 * `setsid` with a cleared environment after a double fork leads a group
 * and a session of its own, its parent is init (or the reaper detached
 * processes go to), and nothing of the Run is seen in it: "outside every
 * Run" (containment/outside-runs.ts) cannot tell it from a user's shell.
 * What it keeps is where it works and when it started. So the end's orphan
 * rule (containment/escapes.ts) is asked of the launchers the supervision
 * host takes Runs from (a launcher asks a host that it work in
 * `supervision/`, where launchers start it: host-client.ts): an orphan among a process, its ancestors and their
 * group and session leaders, started since a live Run began (as its step
 * wrapper or its own supervisor shows, whatever its records say; or as the
 * state root's records show), working in that Run's directory, is not shown
 * to be outside it. A
 * user's own `setsid actors run` from that directory is taken for one too:
 * its launch gets a supervisor of its own instead of the host. A helper that
 * also changes directory is beyond this (docs/containment.md).
 */
import {readFileSync} from 'node:fs'
import {runDir} from '../../base/platform/home.js'
import {listProcStats} from '../../base/platform/process-tree.js'
import {parseSupervisorCommandLine} from '../../base/records/supervisor-args.js'
import {isStepWrapperCommand} from '../containment/outside-runs.js'
import {
  lineageWithLeaders,
  isSameProcess,
  readProcStat,
  ticksSinceBoot,
  type ProcStat,
} from '../../base/platform/process-identity.js'
import {isTerminal} from '../../base/records/run.js'
import {cwdOf, stateDirBornTicks} from '../containment/escapes.js'
import {parseMarker, validMarker} from '../history/index-markers.js'
import {listIndex} from '../history/live-index.js'
import {readRunMetaRaw} from '../runs/store.js'

/** Where a live Run works (run.json's `cwd` and its live recorded processes' own) and since when (clock ticks). */
interface RunOrigin {
  sinceTicks: number
  cwds: Set<string>
}

/**
 * The pid of an orphan among process `pid`, its ancestors and their group
 * and session leaders that started in the directory of a live Run (any on
 * this machine, or one `home` records) since that Run began; undefined when
 * there is none. `reaper`: the process
 * detached processes are handed to besides init (the supervision host's
 * parent).
 */
export function cutLooseFromARun(pid: number, home: string, reaper: number | undefined): number | undefined {
  const reapers = new Set([1, reaper ?? 1])
  const orphans: Array<{pid: number; start: number; cwd: string}> = []
  for (const stat of lookedAt(pid)) {
    const cwd = reapers.has(stat.ppid) ? cwdOf(stat.pid) : undefined
    if (cwd !== undefined) orphans.push({pid: stat.pid, start: Number(stat.start), cwd})
  }
  if (orphans.length === 0) return undefined
  const origins = originsFor(home, Math.max(...orphans.map((orphan) => orphan.start)))
  const found = orphans.find(({start, cwd}) => origins.some((o) => start >= o.sinceTicks && o.cwds.has(cwd)))
  return found?.pid
}

/** How long the origins read for one question answer the next (the host asks at every launch). */
const ORIGINS_REUSE_MS = 1000

let lastOrigins: {home: string; readAtTicks: number; readAt: number; origins: RunOrigin[]} | undefined

/**
 * The origins of the live Runs begun by `beforeTicks` (liveRunOrigins). A
 * host asks this at every launch: what it read for an earlier launch serves
 * for a while, when every orphan asked about started before that read (a
 * Run that began after it cannot have begun before them; one that ended
 * since only makes the answer stricter). Most launchers' orphan is a daemon
 * started long before (sshd, a tmux server), so Runs born since are not read.
 */
function originsFor(home: string, beforeTicks: number): RunOrigin[] {
  const last = lastOrigins
  if (last && last.home === home && beforeTicks < last.readAtTicks && Date.now() - last.readAt < ORIGINS_REUSE_MS)
    return last.origins
  const readAtTicks = ticksSinceBoot()
  // Read everything begun before the read, not only before `beforeTicks`: the next question may reach further.
  const origins = liveRunOrigins(home, readAtTicks ?? Number.POSITIVE_INFINITY)
  if (readAtTicks !== undefined) lastOrigins = {home, readAtTicks, readAt: Date.now(), origins}
  return origins
}

/** Process `pid`, its ancestors, and the group and session leader of each (each once; those gone are left out). */
function* lookedAt(pid: number): Generator<ProcStat> {
  for (const at of lineageWithLeaders(pid)) {
    const found = at === undefined ? undefined : readProcStat(at)
    if (found && found.state !== 'Z') yield found
  }
}

/**
 * The live Runs begun by `beforeTicks`: when each began and where it works.
 * Each source only adds Runs, so a Run must defeat all of them to hide: the
 * processes a Run cannot rewrite (each step wrapper works in the Run's
 * directory from its step's start, a Run's own supervisor in its launcher's
 * from the Run's), and the run index with the records a Run can (a lost Run
 * has no supervisor or wrapper left to show).
 */
function liveRunOrigins(home: string, beforeTicks: number): RunOrigin[] {
  return [...originsOfProcesses(beforeTicks), ...originsOfRecords(home, beforeTicks)]
}

/** Step wrappers and per-Run supervisors started by `beforeTicks`: each one's start and directory. */
function originsOfProcesses(beforeTicks: number): RunOrigin[] {
  const origins: RunOrigin[] = []
  for (const stat of listProcStats()) {
    const sinceTicks = Number(stat.start)
    if (!(sinceTicks <= beforeTicks) || stat.state === 'Z') continue
    let args: string[]
    try {
      args = readFileSync(`/proc/${stat.pid}/cmdline`, 'utf8').split('\0')
    } catch {
      continue
    }
    // A host's directory is its own (supervision/), never a Run's: only a Run's own supervisor says where it began.
    const supervisor = isStepWrapperCommand(args) ? undefined : parseSupervisorCommandLine(args)
    const cwd = isStepWrapperCommand(args) || (supervisor && !supervisor.host) ? cwdOf(stat.pid) : undefined
    if (cwd) origins.push({sinceTicks, cwds: new Set([cwd])})
  }
  return origins
}

/** The live Runs of `home` by the run index's live markers and their run.json, begun by `beforeTicks`. */
function originsOfRecords(home: string, beforeTicks: number): RunOrigin[] {
  const origins: RunOrigin[] = []
  for (const name of listIndex(home)) {
    const marker = parseMarker(name)
    if (!marker || marker.queued || !validMarker(marker)) continue
    const dir = runDir(home, marker.id)
    const sinceTicks = stateDirBornTicks(dir)
    if (sinceTicks > beforeTicks) continue
    let meta: ReturnType<typeof readRunMetaRaw>
    try {
      meta = readRunMetaRaw(dir)
    } catch {
      continue
    }
    if (!meta || isTerminal(meta.status) || meta.run_instance_id !== marker.instance) continue
    const cwds = new Set(typeof meta.cwd === 'string' ? [meta.cwd] : [])
    for (const record of Array.isArray(meta.children_processes) ? meta.children_processes : []) {
      const cwd = isSameProcess(record?.identity) ? cwdOf(record.identity!.pid) : undefined
      if (cwd) cwds.add(cwd)
    }
    origins.push({sinceTicks, cwds})
  }
  return origins
}
