/**
 * A unit that is a cgroup (SPEC: Containment): `<own cgroup>/actors/<home
 * key>/<id>` in the cgroup2 hierarchy (kill, freeze, membership, CPU), plus,
 * on a hybrid machine, the same path below this process's own v1 memory,
 * pids and cpu cgroups where usage or a limit needs them. The home key keeps
 * the cgroups of different state roots apart, so `prune` of one never
 * touches another's. The command joins every cgroup before it execs (a
 * one-line sh wrapper), so nothing it forks is ever outside.
 */
import {existsSync, mkdirSync, readFileSync, rmdirSync} from 'node:fs'
import {isNestedRunCgroup, procsOf, removeCgroupTree, walkCgroups} from './cgroup-tree.js'
import {basename, dirname, join} from 'node:path'
import {sleepSync} from '../../base/platform/sleep.js'
import {signalPids} from '../../base/platform/process-tree.js'
import {readCgroupFile, readKeyedNumbers, writeCgroupFile, type CgroupBases} from './cgroup-fs.js'
import {
  endRecordArgs,
  type ContainmentRecord,
  type EndRecordTarget,
  type Unit,
  type UnitLimits,
  type UnitUsage,
} from './unit.js'
import {RECORD_END} from './end-record.js'

/** Joins each cgroup.procs named before `--`, then execs the rest: `sh -c JOIN actors-join FILE... -- ARGV...`. */
const JOIN = 'while [ "$1" != -- ]; do echo $$ >"$1" || exit 125; shift; done; shift; exec "$@"'
/** JOIN, then stays the command's parent to record its end (end-record.ts): `... -- FILE TAG ARGV...`. */
export const JOIN_RECORDING = `while [ "$1" != -- ]; do echo $$ >"$1" || exit 125; shift; done; shift; ${RECORD_END}`

/** The folder of a state root's unit cgroups below a base: `<base>/actors/<home key>`. */
export function unitsDir(base: string, homeKey: string): string {
  return join(base, 'actors', homeKey)
}

export class CgroupUnit implements Unit {
  constructor(readonly record: Extract<ContainmentRecord, {kind: 'cgroup'}>) {}

  private dirs(): string[] {
    return [this.record.path, ...Object.values(this.record.v1 ?? {}).filter((d): d is string => typeof d === 'string')]
  }

  wrap(argv: string[], end?: EndRecordTarget): string[] {
    const procs = this.dirs().map((d) => join(d, 'cgroup.procs'))
    if (!end) return ['/bin/sh', '-c', JOIN, 'actors-join', ...procs, '--', ...argv]
    return ['/bin/sh', '-c', JOIN_RECORDING, 'actors-join', ...procs, '--', ...endRecordArgs(end), ...argv]
  }

  memberEnv(): Record<string, string> {
    return {}
  }

  /** Every live process of the unit's cgroup tree, the cgroups it made below its own included (cgroup-tree.ts). */
  members(): number[] {
    return procsOf(walkCgroups(this.record.path).dirs)
  }

  /** What a normal end sweeps: the tree but for nested Runs' units, their supervisors and commands on their way in. */
  strays(): number[] {
    const dirs = walkCgroups(this.record.path, isNestedRunCgroup).dirs
    return procsOf(dirs, (pid) => !isSupervisor(pid) && !isJoining(pid))
  }

  signal(signal: NodeJS.Signals): number[] {
    const pids = this.members()
    signalPids(pids, signal)
    return pids
  }

  kill(): void {
    if (!writeCgroupFile(this.record.path, 'cgroup.kill', '1')) signalPids(this.members(), 'SIGKILL')
  }

  freeze(): boolean {
    if (!writeCgroupFile(this.record.path, 'cgroup.freeze', '1')) return false
    for (let tries = 0; tries < 100; tries++) {
      if (readKeyedNumbers(this.record.path, 'cgroup.events').get('frozen') === 1) return true
      sleepSync(10)
    }
    return false
  }

  /**
   * Whether the cgroup is held frozen: by its own pause, or by an ancestor's
   * (a paused parent Run's unit holds it). Read from the `cgroup.freeze` asks
   * on the way up, not from `cgroup.events`: the kernel reports a descendant
   * frozen only once each of its tasks has stopped, which a task that moved in
   * while the freeze spread can put off for seconds, while the ask holds it
   * all the same.
   */
  isFrozen(): boolean {
    for (let dir = this.record.path; dir !== dirname(dir); dir = dirname(dir)) {
      const asked = readCgroupFile(dir, 'cgroup.freeze')
      if (asked === undefined) return false // above the hierarchy's root (which has no cgroup.freeze)
      if (asked.trim() === '1') return true
    }
    return false
  }

  thaw(): void {
    writeCgroupFile(this.record.path, 'cgroup.freeze', '0')
  }

  usage(): UnitUsage {
    const usec = readKeyedNumbers(this.record.path, 'cpu.stat').get('usage_usec')
    const memory = this.memoryDir()
    const number = (name: string) => {
      const text = memory ? readCgroupFile(memory, name) : undefined
      return text !== undefined && /^\d+$/.test(text) ? Number(text) : null
    }
    const v2 = memory === this.record.path
    return {
      cpu_seconds: usec === undefined ? null : Math.round(usec / 1000) / 1000,
      memory_bytes: number(v2 ? 'memory.current' : 'memory.usage_in_bytes'),
      peak_memory_bytes: number(v2 ? 'memory.peak' : 'memory.max_usage_in_bytes'),
    }
  }

  /** The cgroup that accounts memory: the v1 memory one on a hybrid machine, else the unit's own (when the controller is on). */
  private memoryDir(): string | undefined {
    if (this.record.v1?.memory) return this.record.v1.memory
    return readCgroupFile(this.record.path, 'memory.current') === undefined ? undefined : this.record.path
  }

  limitHit(): 'memory_limit' | 'pids_limit' | undefined {
    const memory = this.memoryDir()
    if (memory) {
      const events = readKeyedNumbers(memory, memory === this.record.path ? 'memory.events' : 'memory.oom_control')
      if ((events.get('oom_kill') ?? 0) > 0) return 'memory_limit'
    }
    const pids = this.record.v1?.pids ?? this.record.path
    if ((readKeyedNumbers(pids, 'pids.events').get('max') ?? 0) > 0) return 'pids_limit'
    return undefined
  }

  remove(): boolean {
    let removed = true
    for (const dir of this.dirs()) {
      // A tree that still holds a process is kept whole: a Run launched from inside may be making its unit there.
      const walk = walkCgroups(dir)
      if (procsOf(walk.dirs).length > 0 || !removeCgroupTree(dir)) {
        removed = false
        continue
      }
      // The state root's folder goes with its last unit, and the `actors` folder with its last root: inside a
      // parent Run's cgroup that folder was all that kept the parent's from being removed at its own end. A
      // unit made meanwhile keeps them (rmdir refuses a folder that is not empty).
      try {
        rmdirSync(dirname(dir))
        if (basename(dirname(dirname(dir))) === 'actors') rmdirSync(dirname(dirname(dir)))
      } catch {}
    }
    return removed
  }
}

const SUPERVISOR_MARK = Buffer.from('\0ACTORS_SUPERVISOR=1\0')
/** The start of the command line of a unit's join wrappers (wrap() above), as /proc/<pid>/cmdline holds it. */
const JOINING_MARKS = [JOIN, JOIN_RECORDING].map((text) => Buffer.from(`/bin/sh\0-c\0${text}\0actors-join\0`))

/** Whether `pid` is the supervisor of a Run launched from inside this unit (its environment says so). */
function isSupervisor(pid: number): boolean {
  try {
    return Buffer.concat([Buffer.from([0]), readFileSync(`/proc/${pid}/environ`)]).indexOf(SUPERVISOR_MARK) >= 0
  } catch {
    return false
  }
}

/**
 * Whether `pid` is a command on its way into a unit of its own: a Run
 * launched from inside this unit starts its command here (its supervisor's
 * cgroup) and the join wrapper moves it out a moment later. A normal end's
 * sweep that met it in that moment killed the nested Run's command.
 */
function isJoining(pid: number): boolean {
  try {
    const cmdline = readFileSync(`/proc/${pid}/cmdline`)
    return JOINING_MARKS.some((mark) => cmdline.subarray(0, mark.length).equals(mark))
  } catch {
    return false
  }
}

/**
 * Make the cgroups of a new unit `id` below `bases` and set its limits.
 * Returns undefined when the kernel cannot kill a cgroup as a whole
 * (cgroup.kill needs Linux 5.14): the caller then tracks instead. Throws
 * (naming the limit) when a limit was asked for that cannot be set here.
 */
export function createCgroupUnit(
  bases: CgroupBases,
  homeKey: string,
  id: string,
  limits: UnitLimits,
): CgroupUnit | undefined {
  const path = join(unitsDir(bases.unified, homeKey), id)
  enableControllers(bases.unified, homeKey, limits)
  makeDir(path)
  if (!hasFile(path, 'cgroup.kill')) {
    new CgroupUnit({kind: 'cgroup', path}).remove()
    return undefined
  }
  const v1: NonNullable<Extract<ContainmentRecord, {kind: 'cgroup'}>['v1']> = {}
  const v2Has = (file: string) => hasFile(path, file)
  if (bases.v1.memory && !v2Has('memory.max')) v1.memory = join(unitsDir(bases.v1.memory, homeKey), id)
  if (limits.pids !== undefined && bases.v1.pids && !v2Has('pids.max'))
    v1.pids = join(unitsDir(bases.v1.pids, homeKey), id)
  if (limits.cpus !== undefined && bases.v1.cpu && !v2Has('cpu.max')) v1.cpu = join(unitsDir(bases.v1.cpu, homeKey), id)
  for (const dir of Object.values(v1)) makeDir(dir)
  const unit = new CgroupUnit({kind: 'cgroup', path, ...(Object.keys(v1).length ? {v1} : {})})
  try {
    applyLimits(unit.record, limits)
  } catch (error) {
    unit.remove()
    throw error
  }
  return unit
}

/** mkdir -p, again when another unit's removal took the state root's folder away in between. */
function makeDir(dir: string): void {
  for (let attempt = 0; ; attempt++) {
    try {
      mkdirSync(dir, {recursive: true})
      return
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT' || attempt >= 5) throw error
    }
  }
}

function hasFile(dir: string, name: string): boolean {
  return existsSync(join(dir, name))
}

/** Pure v2: controllers must be enabled on each level above the unit (best effort; a level holding processes refuses). */
function enableControllers(base: string, homeKey: string, limits: UnitLimits): void {
  if (limits.memory_bytes === undefined && limits.pids === undefined && limits.cpus === undefined) return
  const wanted = ['memory', 'pids', 'cpu'].filter((c) =>
    (readCgroupFile(base, 'cgroup.controllers') ?? '').split(' ').includes(c),
  )
  if (wanted.length === 0) return
  const levels = [base, join(base, 'actors'), unitsDir(base, homeKey)]
  for (const [index, level] of levels.entries()) {
    if (index > 0) mkdirSync(level, {recursive: true})
    writeCgroupFile(level, 'cgroup.subtree_control', wanted.map((c) => `+${c}`).join(' '))
  }
}

const CPU_PERIOD_US = 100_000

function applyLimits(record: Extract<ContainmentRecord, {kind: 'cgroup'}>, limits: UnitLimits): void {
  const refuse = (what: string) => {
    throw new Error(
      `this machine's cgroups cannot enforce the ${what} limit (no writable controller below this process's cgroup)`,
    )
  }
  if (limits.memory_bytes !== undefined) {
    const bytes = String(limits.memory_bytes)
    const ok = record.v1?.memory
      ? writeCgroupFile(record.v1.memory, 'memory.limit_in_bytes', bytes) &&
        (writeCgroupFile(record.v1.memory, 'memory.memsw.limit_in_bytes', bytes) || true)
      : writeCgroupFile(record.path, 'memory.max', bytes) &&
        (writeCgroupFile(record.path, 'memory.swap.max', '0') || true)
    if (!ok) refuse('memory')
  }
  if (limits.pids !== undefined && !writeCgroupFile(record.v1?.pids ?? record.path, 'pids.max', String(limits.pids)))
    refuse('pids')
  if (limits.cpus !== undefined) {
    const quota = Math.max(1000, Math.round(limits.cpus * CPU_PERIOD_US))
    const ok = record.v1?.cpu
      ? writeCgroupFile(record.v1.cpu, 'cpu.cfs_period_us', String(CPU_PERIOD_US)) &&
        writeCgroupFile(record.v1.cpu, 'cpu.cfs_quota_us', String(quota))
      : writeCgroupFile(record.path, 'cpu.max', `${quota} ${CPU_PERIOD_US}`)
    if (!ok) refuse('cpu')
  }
}
