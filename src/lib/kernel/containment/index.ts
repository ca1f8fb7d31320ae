/**
 * Choosing, making and opening a Run's unit (SPEC: Containment), and ending
 * one: the only entry the rest of the kernel uses. A cgroup where this
 * process may make one below its own (cgroup-fs.ts) unless
 * `ACTORS_CONTAINMENT=tracked` asks for tracking; run.json's `containment`
 * record opens the same unit later from any command.
 */
import {sleep, sleepSync} from '../../base/platform/sleep.js'
import {sha256Hex} from '../../base/platform/sha256.js'
import {listProcStats, type RunProcessQuery} from '../../base/platform/process-tree.js'
import type {ProcStat} from '../../base/platform/process-identity.js'
import {discoverCgroupBases} from './cgroup-fs.js'
import {CgroupUnit, createCgroupUnit} from './cgroup-unit.js'
import {TrackedUnit} from './tracked-unit.js'
import {markerCarriers, unaccountedProcesses, type UnitOrigin} from './escapes.js'
import {provenRecord, type UnitOwner} from './proof.js'
import {commandOf, type Leftover, type Unit, type UnitLimits} from './unit.js'

export type {ContainmentRecord, Leftover, Unit, UnitLimits, UnitUsage} from './unit.js'
export type {UnitOwner} from './proof.js'
export {runUnitOwner} from './proof.js'

/** Which containment a Run launched now from this process gets. */
export function containmentKind(env: NodeJS.ProcessEnv = process.env): 'cgroup' | 'tracked' {
  if (env.ACTORS_CONTAINMENT === 'tracked') return 'tracked'
  return discoverCgroupBases(env) ? 'cgroup' : 'tracked'
}

/** A short stable name for a state root, so each root's cgroups live in a folder of their own. */
export function homeKey(home: string): string {
  return sha256Hex(home).slice(0, 16)
}

/**
 * Make the unit for a Run (or a `lock exec`) about to start: a cgroup named
 * `id` when this machine allows, else a tracked unit over `query`. Throws when
 * limits were asked for that cannot be enforced here.
 */
export function createUnit(
  home: string,
  id: string,
  limits: UnitLimits,
  query: () => RunProcessQuery,
  marker?: string,
): Unit {
  const bases = containmentKind() === 'cgroup' ? discoverCgroupBases() : null
  const unit = bases ? createCgroupUnit(bases, homeKey(home), id, limits) : undefined
  if (unit) return unit
  if (hasLimits(limits))
    throw new Error('limits need a cgroup, and this process cannot make one here (tracked containment)')
  return new TrackedUnit({kind: 'tracked', ...(marker ? {marker} : {})}, query)
}

/** Whether any limit is set. */
export function hasLimits(limits: UnitLimits | undefined): boolean {
  return Boolean(
    limits && (limits.memory_bytes !== undefined || limits.cpus !== undefined || limits.pids !== undefined),
  )
}

/**
 * Open the unit a record names (run.json `containment`), once proven to be
 * `owner`'s (proof.ts: a record naming another cgroup or marker is refused,
 * exit 1, naming the file). A record that is absent (a Run from before
 * containment) tracks by `query`.
 */
export function openUnit(record: unknown, query: () => RunProcessQuery, owner: UnitOwner): Unit {
  const proven = provenRecord(record, owner)
  if (proven?.kind === 'cgroup') return new CgroupUnit(proven)
  const marker = proven?.kind === 'tracked' ? proven.marker : undefined
  return new TrackedUnit({kind: 'tracked', ...(marker ? {marker} : {})}, query)
}

/**
 * How the marker sweep knows a Run's processes: `ACTORS_RUN_INSTANCE=<instance>`
 * in their environment, unless ACTORS_RUN names another Run of the state root
 * that holds that instance (`stateDir`: as the kernel resolved it), so a
 * run.json that names a sibling's instance sweeps nothing of the sibling's,
 * and a process that names some other id to slip away is still swept.
 */
export interface RunMark {
  instance: string
  stateDir: string
  /**
   * When the Run's first process started (clock ticks since boot), as the
   * supervisor that started it knows it: a process older than that cannot
   * carry the Run's marker (an environment changes only at exec, which
   * keeps the start time), so its environment is not read.
   */
  startedSince?: number
}

/** The mark of the Run instance `instance` read from the state dir `dir`; `startedSince`: see RunMark. */
export function runMarkOf(dir: string, instance: string, startedSince?: number): RunMark {
  return {instance, stateDir: dir, ...(startedSince !== undefined ? {startedSince} : {})}
}

/** How long past kill_grace an end keeps sweeping before it names what is left (SPEC: leftover). */
export const LEFTOVER_AFTER_MS = 5000
const SWEEP_MS = 20

/**
 * End every process of `unit`: with `graceMs` (a stop, a timeout), SIGTERM
 * first (again to each member that appears meanwhile) and wait up to
 * `graceMs` for them to go; then kill, sweeping until a sweep finds nothing.
 * Resolves with what is still there LEFTOVER_AFTER_MS later (normally none).
 */
export async function endUnit(
  unit: Unit,
  graceMs: number | undefined,
  options: {spareNestedRuns?: boolean; mark?: RunMark; onOutside?: (found: Leftover[]) => void} = {},
): Promise<Leftover[]> {
  const left = await endInside(unit, graceMs, options.spareNestedRuns)
  if (!options.mark) return left
  return [...left, ...(await sweepByMarker(unit, options.mark, options.onOutside))]
}

async function endInside(unit: Unit, graceMs: number | undefined, spareNestedRuns?: boolean): Promise<Leftover[]> {
  // A normal end sweeps only what the command left behind: Runs it launched live on (SPEC: Trees).
  const members = spareNestedRuns ? () => unit.strays() : () => unit.members()
  const kill = spareNestedRuns
    ? () => {
        for (const pid of members()) signalOne(pid, 'SIGKILL')
      }
    : () => unit.kill()
  if (graceMs !== undefined && graceMs > 0) {
    const termed = new Set<number>()
    const deadline = Date.now() + graceMs
    for (;;) {
      const fresh = members().filter((pid) => !termed.has(pid))
      for (const pid of fresh) termed.add(pid)
      if (fresh.length > 0) {
        unit.thaw()
        for (const pid of fresh) signalOne(pid, 'SIGTERM')
        unit.thaw()
      }
      if (termed.size > 0 && members().length === 0) return []
      if (termed.size === 0 || Date.now() >= deadline) break
      await sleep(SWEEP_MS * 2)
    }
  }
  const deadline = Date.now() + LEFTOVER_AFTER_MS
  for (;;) {
    kill()
    unit.thaw()
    await sleep(SWEEP_MS)
    const left = members()
    if (left.length === 0) return []
    if (Date.now() >= deadline) return left.map((pid) => ({pid, command: commandOf(pid)}))
  }
}

/**
 * After a unit's own end, the Run's processes that left it (SPEC: leftover):
 * whatever of this user carries the Run's ACTORS_RUN_INSTANCE marker outside
 * the unit (a root Run that wrote itself into another cgroup) is killed,
 * sweeping until none is left, and each is named (`outside: "marker"`,
 * `ended`). Under tracking every marker carrier is a member: nothing is found.
 */
async function sweepByMarker(unit: Unit, mark: RunMark, onOutside?: (found: Leftover[]) => void): Promise<Leftover[]> {
  const named = new Map<number, string>()
  const deadline = Date.now() + LEFTOVER_AFTER_MS
  while (killOutside(unit, mark, named, onOutside) && Date.now() < deadline) await sleep(SWEEP_MS)
  return namedOutside(unit, mark, named)
}

/**
 * sweepByMarker, synchronously (a lost Run's reconciliation); its first sweep
 * reads `table` (a process table just read) instead of /proc.
 */
function sweepByMarkerSync(unit: Unit, mark: RunMark, table?: readonly ProcStat[]): Leftover[] {
  const named = new Map<number, string>()
  const deadline = Date.now() + LEFTOVER_AFTER_MS
  let look = table
  while (killOutside(unit, mark, named, undefined, look) && Date.now() < deadline) {
    look = undefined
    sleepSync(SWEEP_MS)
  }
  return namedOutside(unit, mark, named)
}

/**
 * At a Run's end, after its unit's own sweep (`known`: what it named): the
 * marker sweep, then the orphans that may have left the unit unseen
 * (escapes.ts), as `leftover` entries. `origin`: when and where the unit began.
 */
export function sweepBeyondUnitSync(unit: Unit, mark: RunMark, origin: UnitOrigin, known: Leftover[]): Leftover[] {
  const seen = new Set(known.map((item) => item.pid))
  // One pass over /proc serves both looks when the marker sweep finds nothing (the usual end): it sits between a
  // command's end and the wait that hears of it.
  const table = listProcStats()
  const swept = sweepByMarkerSync(unit, mark, table)
  const marked = swept.filter((item) => !seen.has(item.pid))
  for (const item of marked) seen.add(item.pid)
  const beyond = unaccountedProcesses({origin}, [...seen, ...unit.members()], swept.length === 0 ? table : undefined)
  return [...marked, ...beyond]
}

/** What carries the Run's marker outside `unit` now (a cgroup left by writing to another one), with command lines. */
export function outsideUnit(unit: Unit, mark: RunMark): Leftover[] {
  return outsideByMarker(unit, mark).map((pid) => ({pid, command: commandOf(pid)}))
}

/** Marker carriers that are not members of `unit` now (`table`: a process table just read). */
function outsideByMarker(unit: Unit, mark: RunMark, table?: readonly ProcStat[]): number[] {
  const members = new Set(unit.members())
  return markerCarriers(mark.instance, [], mark.stateDir, mark.startedSince, table).filter((pid) => !members.has(pid))
}

/** One sweep: note (`onOutside`: the new ones, before they are killed) and SIGKILL each carrier outside the unit; false once there is none. */
function killOutside(
  unit: Unit,
  mark: RunMark,
  named: Map<number, string>,
  onOutside?: (found: Leftover[]) => void,
  table?: readonly ProcStat[],
): boolean {
  const found = outsideByMarker(unit, mark, table)
  const fresh = found.filter((pid) => !named.has(pid)).map((pid) => ({pid, command: commandOf(pid)}))
  for (const item of fresh) named.set(item.pid, item.command)
  if (fresh.length > 0) onOutside?.(fresh)
  for (const pid of found) signalOne(pid, 'SIGKILL')
  return found.length > 0
}

function namedOutside(unit: Unit, mark: RunMark, named: Map<number, string>): Leftover[] {
  if (named.size === 0) return []
  const alive = new Set(outsideByMarker(unit, mark))
  return [...named].map(([pid, command]) => ({pid, command, outside: 'marker' as const, ended: !alive.has(pid)}))
}

/** endUnit's kill phase, synchronously (reconciliation of a lost supervisor runs inside a read); then the marker sweep. */
export function killUnitSync(unit: Unit, budgetMs = LEFTOVER_AFTER_MS, mark?: RunMark): Leftover[] {
  const left = killInsideSync(unit, budgetMs)
  return mark ? [...left, ...sweepByMarkerSync(unit, mark)] : left
}

function killInsideSync(unit: Unit, budgetMs: number): Leftover[] {
  if (unit.members().length === 0) return []
  const deadline = Date.now() + budgetMs
  for (;;) {
    unit.kill()
    unit.thaw()
    sleepSync(SWEEP_MS)
    const left = unit.members()
    if (left.length === 0) return []
    if (Date.now() >= deadline) return left.map((pid) => ({pid, command: commandOf(pid)}))
  }
}

function signalOne(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal)
  } catch {}
}
