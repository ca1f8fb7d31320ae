/**
 * Where this process may make cgroups (SPEC: Containment). The mounts come
 * from /proc/self/mountinfo and this process's own cgroup in each hierarchy
 * from /proc/self/cgroup; no path is hard-coded. A Run's cgroups are always
 * made below the cgroup this process is in, so whatever limits the machine
 * or the user's session sets above stay in force.
 *
 * Two layouts: pure v2 (one cgroup2 hierarchy with cgroup.kill, cgroup.freeze,
 * memory.*, pids.max, cpu.max) and hybrid (a cgroup2 mount for kill, freeze
 * and cpu.stat, with memory, pids and cpu as v1 hierarchies of their own).
 */
import {accessSync, constants, readFileSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {runOfCgroupPath} from './caller-cgroup.js'

/** The directories of this process's own cgroups that a Run's cgroups are made below. */
export interface CgroupBases {
  /** This process's cgroup in the cgroup2 hierarchy. */
  unified: string
  /** v1 hierarchies (hybrid layout only), when mounted and writable. */
  v1: {memory?: string; pids?: string; cpu?: string}
}

interface Mount {
  point: string
  root: string
  fstype: string
  superOptions: string[]
}

/** Undo mountinfo's octal escapes (`\040` for a space). */
function unescapeMount(text: string): string {
  if (!text.includes('\\')) return text
  return text.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(parseInt(octal, 8)))
}

/** The cgroup mounts listed in `mountinfo` (text as /proc/self/mountinfo holds it; this process's own by default). */
function readMounts(mountinfo = readFileSync('/proc/self/mountinfo', 'utf8')): Mount[] {
  const mounts: Mount[] = []
  for (const line of mountinfo.split('\n')) {
    const dash = line.indexOf(' - ')
    // Only cgroup mounts are split into fields (a machine may have hundreds of others).
    if (dash < 0 || !line.startsWith('cgroup', dash + 3)) continue
    const [fstype, , superOptions] = line.slice(dash + 3).split(' ')
    if (fstype !== 'cgroup' && fstype !== 'cgroup2') continue
    const left = line.slice(0, dash).split(' ')
    mounts.push({
      point: unescapeMount(left[4]),
      root: unescapeMount(left[3]),
      fstype,
      superOptions: (superOptions ?? '').split(','),
    })
  }
  return mounts
}

/** `ownCgroups` (text as /proc/self/cgroup holds it) as hierarchy key ("" for v2, else the controller list) → path. */
function readOwnCgroups(ownCgroups: string): Map<string, string> {
  const own = new Map<string, string>()
  for (const line of ownCgroups.split('\n')) {
    const first = line.indexOf(':')
    const second = line.indexOf(':', first + 1)
    if (first < 0 || second < 0) continue
    own.set(line.slice(first + 1, second), line.slice(second + 1))
  }
  return own
}

/** The directory of cgroup `path` under `mount`, or undefined when the mount does not show it. */
function dirUnder(mount: Mount, path: string | undefined): string | undefined {
  if (path === undefined) return undefined
  const root = mount.root === '/' ? '' : mount.root
  if (root && path !== root && !path.startsWith(`${root}/`)) return undefined
  const dir = join(mount.point, path.slice(root.length))
  try {
    accessSync(dir, constants.W_OK)
    return dir
  } catch {
    return undefined
  }
}

let cached: CgroupBases | null | undefined

/**
 * This process's own cgroups, when a writable cgroup2 hierarchy is there;
 * null otherwise. `$ACTORS_CGROUP` names a delegated v2 cgroup to use
 * instead of the own one (a user's systemd scope), except inside a Run, whose
 * units nest below its own. Read once per process.
 */
export function discoverCgroupBases(env: NodeJS.ProcessEnv = process.env): CgroupBases | null {
  if (cached !== undefined) return cached
  cached = null
  try {
    cached = cgroupBasesFrom(
      readFileSync('/proc/self/mountinfo', 'utf8'),
      readFileSync('/proc/self/cgroup', 'utf8'),
      env,
    )
  } catch {
    cached = null
  }
  return cached
}

/**
 * The bases that `mountinfo` and `ownCgroups` (texts as /proc/self/mountinfo
 * and /proc/self/cgroup hold them) give; null without a writable cgroup2
 * one. A separate step so that either layout (pure v2, hybrid) can be laid
 * out in a directory and read, whatever this machine's own is.
 */
export function cgroupBasesFrom(
  mountinfo: string,
  ownCgroups: string,
  env: NodeJS.ProcessEnv = process.env,
): CgroupBases | null {
  const mounts = readMounts(mountinfo)
  const own = readOwnCgroups(ownCgroups)
  const v2 = mounts.find((m) => m.fstype === 'cgroup2')
  // Inside a Run's cgroup, new units go below it whatever $ACTORS_CGROUP says: a child made elsewhere
  // escaped its parent's pause and limits (lineage comes from the unit, not the environment).
  const inRun = runOfCgroupPath(own.get('') ?? '') !== undefined
  const unified = env.ACTORS_CGROUP && !inRun ? writableDir(env.ACTORS_CGROUP) : v2 && dirUnder(v2, own.get(''))
  if (!unified) return null
  const v1: CgroupBases['v1'] = {}
  for (const controller of ['memory', 'pids', 'cpu'] as const) {
    const mount = mounts.find((m) => m.fstype === 'cgroup' && m.superOptions.includes(controller))
    if (!mount) continue
    const key = [...own.keys()].find((k) => k.split(',').includes(controller))
    const dir = dirUnder(mount, key === undefined ? undefined : own.get(key))
    if (dir) v1[controller] = dir
  }
  return {unified, v1}
}

function writableDir(dir: string): string | undefined {
  try {
    accessSync(join(dir, 'cgroup.procs'), constants.W_OK)
    return dir
  } catch {
    return undefined
  }
}

/** Read a cgroup file as trimmed text; undefined when it is not there. */
export function readCgroupFile(dir: string, name: string): string | undefined {
  try {
    return readFileSync(join(dir, name), 'utf8').trim()
  } catch {
    return undefined
  }
}

/** Write a cgroup file; false when the kernel refused (or the file is not there). */
export function writeCgroupFile(dir: string, name: string, value: string): boolean {
  try {
    writeFileSync(join(dir, name), value)
    return true
  } catch {
    return false
  }
}

/** `key value` lines (cpu.stat, memory.events, pids.events) as a map of numbers. */
export function readKeyedNumbers(dir: string, name: string): Map<string, number> {
  const values = new Map<string, number>()
  for (const line of (readCgroupFile(dir, name) ?? '').split('\n')) {
    const [key, value] = line.split(' ')
    if (key && value !== undefined) values.set(key, Number(value))
  }
  return values
}

let mountPoints: string[] | undefined

/** Whether `dir` lies inside a mounted cgroup hierarchy (guards paths read back from run.json). */
export function isCgroupDir(dir: string): boolean {
  try {
    mountPoints ??= readMounts().map((m) => m.point)
    return mountPoints.some((point) => dir.startsWith(`${point}/`)) && !dir.split('/').includes('..')
  } catch {
    return false
  }
}

/** The directory of `pid`'s cgroup in the cgroup2 hierarchy, when this process may write there; undefined otherwise. */
export function unifiedCgroupDirOf(pid: number): string | undefined {
  try {
    const line = readFileSync(`/proc/${pid}/cgroup`, 'utf8')
      .split('\n')
      .find((l) => l.startsWith('0::'))
    const v2 = readMounts().find((m) => m.fstype === 'cgroup2')
    return v2 && line ? dirUnder(v2, line.slice(3)) : undefined
  } catch {
    return undefined
  }
}
