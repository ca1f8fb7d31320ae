/**
 * Finding every process that belongs to a Run, including ones that left its
 * process group or session (setsid) or were re-parented to init after a
 * double fork. Three nets, on Linux from /proc:
 *  - descendants by parent pid of the Run's command processes,
 *  - members of the command's process groups,
 *  - any process whose environment carries the Run's ACTORS_RUN_INSTANCE
 *    marker (inherited by everything the command starts, even daemons).
 * Elsewhere, `ps -A -o pid=,ppid=,pgid=` provides the first two.
 */
import {execaLibrary} from './execa.js'
import {closeSync, constants, fstatSync, openSync, readdirSync, readFileSync} from 'node:fs'
import {basename, dirname, join} from 'node:path'
import {readProcStat, type ProcStat} from './process-identity.js'
import {envKey, environOf, envValue} from './process-environ.js'

/** Every process now (from /proc; `ps` elsewhere, without sessions or start times). */
export function listProcStats(): ProcStat[] {
  let entries: string[]
  try {
    entries = readdirSync('/proc')
  } catch {
    return listWithPs()
  }
  const stats: ProcStat[] = []
  for (const entry of entries) {
    if (entry.charCodeAt(0) < 48 || entry.charCodeAt(0) > 57) continue
    const stat = readProcStat(Number(entry))
    if (stat) stats.push(stat)
  }
  return stats
}

function listWithPs(): ProcStat[] {
  try {
    // Only where /proc is missing (macOS): execa is loaded by this fallback alone. ps's complaints show, as execFileSync's did.
    const {stdout} = execaLibrary().execaSync('ps', ['-A', '-o', 'pid=,ppid=,pgid=,stat='], {
      stdio: ['pipe', 'pipe', 'inherit'],
    })
    return stdout
      .split('\n')
      .filter(Boolean)
      .map((line) => {
        const [pid, ppid, pgid, state] = line.trim().split(/\s+/)
        return {pid: Number(pid), ppid: Number(ppid), pgid: Number(pgid), sid: 0, state: state ?? '?', start: ''}
      })
  } catch {
    return []
  }
}

/** Whether `pid`'s environment holds `marker` (`\0NAME=value\0`) and, with `stateDir`, is not another Run's process. */
function environHasMarker(pid: number, marker: Buffer, stateDir?: string): boolean {
  const environ = environOf(pid)
  if (!environ || environ.indexOf(marker) < 0) return false
  return stateDir === undefined || !isAnotherRuns(environ, stateDir)
}

/** Whether `pid` is a process of another Run of the state root than the one in `stateDir` (see isAnotherRuns). */
export function isAnotherRunsProcess(pid: number, stateDir: string): boolean {
  const environ = environOf(pid)
  return environ !== undefined && isAnotherRuns(environ, stateDir)
}

/**
 * Whether an environment is that of another Run of the state root than the
 * one in `stateDir`: its ACTORS_RUN names a Run whose run.json holds its
 * ACTORS_RUN_INSTANCE. A process that names some other id, or none, is not
 * shown to be another's (it may be this Run's, slipping away).
 */
function isAnotherRuns(environ: Buffer, stateDir: string): boolean {
  const named = envValue(environ, RUN_KEY)
  const instance = envValue(environ, INSTANCE_KEY)
  if (!named || !instance || named === basename(stateDir)) return false
  return holdsInstance(join(dirname(stateDir), named), instance)
}

/** Whether the state dir `dir` is a Run whose run.json records `instance` (read without following links or blocking). */
function holdsInstance(dir: string, instance: string): boolean {
  if (!/^[A-Za-z0-9_.-]{1,128}$/.test(basename(dir)) || basename(dir).startsWith('.')) return false
  let fd: number | undefined
  try {
    fd = openSync(join(dir, 'run.json'), constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW)
    const stat = fstatSync(fd)
    if (!stat.isFile() || stat.size > 1 << 20) return false
    return (JSON.parse(readFileSync(fd, 'utf8')) as {run_instance_id?: unknown}).run_instance_id === instance
  } catch {
    return false
  } finally {
    if (fd !== undefined) closeSync(fd)
  }
}

const RUN_KEY = envKey('ACTORS_RUN')
const INSTANCE_KEY = envKey('ACTORS_RUN_INSTANCE')

export interface RunProcessQuery {
  /** The command processes the supervisor started. */
  rootPids: number[]
  /** Their process groups. */
  pgids: number[]
  /** The Run's instance id; processes whose environment carries it belong to the Run. */
  runInstanceId?: string
  /**
   * The Run's state dir, as the kernel resolved it (never read from
   * run.json): a carrier of the instance whose ACTORS_RUN names another Run
   * of the state root, one whose run.json holds that very instance, is that
   * Run's, so a run.json naming a sibling's instance leads nowhere. A process
   * that merely names some other id stays this Run's.
   */
  stateDir?: string
  /** Processes started before this (clock ticks since boot) are not looked at for `runInstanceId` (escapes.ts). */
  startedSince?: number
  /** Another marker (`NAME=value`) that members carry in their environment (a `lock exec` unit). */
  marker?: string
  /** Never include these (the supervisor itself, the caller). */
  exclude?: number[]
  /** The process table as one pass just read it (listProcStats), so a caller's next look shares that pass. */
  table?: readonly ProcStat[]
}

/** Every live (non-zombie) process of a Run, deepest descendants first. */
export function findRunProcesses(query: RunProcessQuery): number[] {
  const stats = (query.table ?? listProcStats()).filter((s) => s.state !== 'Z')
  const exclude = new Set([process.pid, ...(query.exclude ?? [])])
  const byParent = new Map<number, ProcStat[]>()
  for (const stat of stats) {
    const list = byParent.get(stat.ppid)
    if (list) list.push(stat)
    else byParent.set(stat.ppid, [stat])
  }
  const found = new Map<number, number>() // pid -> depth
  const visit = (pid: number, depth: number) => {
    if (found.has(pid) || exclude.has(pid)) return
    found.set(pid, depth)
    for (const child of byParent.get(pid) ?? []) visit(child.pid, depth + 1)
  }
  // A record names its processes and groups; one that is another Run's (a record copied from a sibling's) is not this one's.
  const stateDir = query.stateDir
  const seed = (pid: number, depth: number) => {
    const environ = stateDir === undefined || found.has(pid) ? undefined : environOf(pid)
    if (!environ || !isAnotherRuns(environ, stateDir!)) visit(pid, depth)
  }
  const alive = new Set(stats.map((s) => s.pid))
  for (const pid of query.rootPids) if (alive.has(pid)) seed(pid, 0)
  const groups = new Set(query.pgids.filter((g) => g > 1))
  for (const stat of stats) if (groups.has(stat.pgid)) seed(stat.pid, 1)
  const marks = [
    query.runInstanceId && {
      text: `ACTORS_RUN_INSTANCE=${query.runInstanceId}`,
      run: stateDir,
      since: query.startedSince,
    },
    query.marker && {text: query.marker, run: undefined, since: undefined},
  ]
  for (const mark of marks) {
    if (!mark) continue
    const marker = Buffer.from(`\0${mark.text}\0`)
    for (const stat of stats) {
      if (found.has(stat.pid) || exclude.has(stat.pid)) continue
      if (mark.since !== undefined && Number(stat.start) < mark.since) continue
      if (environHasMarker(stat.pid, marker, mark.run)) visit(stat.pid, 1)
    }
  }
  return [...found.entries()].sort((a, b) => b[1] - a[1]).map(([pid]) => pid)
}

/** Send `signal` to each pid, ignoring ones that already exited. Returns how many were signalled. */
export function signalPids(pids: number[], signal: NodeJS.Signals): number {
  let sent = 0
  for (const pid of pids) {
    try {
      process.kill(pid, signal)
      sent++
    } catch {}
  }
  return sent
}
