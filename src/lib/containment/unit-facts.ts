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
import {readdirSync, readFileSync, realpathSync} from 'node:fs'
import {basename, resolve} from 'node:path'
import {sleepSync} from '../platform/sleep.js'
import {findRunProcesses, signalPids} from '../platform/process-tree.js'
import {unifiedCgroupDirOf} from './cgroup-fs.js'
import {CgroupUnit} from './cgroup-unit.js'
import {isOwnUnitCgroup} from './proof.js'
import {runUnitName} from './unit-path.js'
import {commandOf, type Leftover} from './unit.js'

export interface FoundUnit {
  /** Live processes of the unit now. */
  pids: number[]
  /** Its cgroups (proven by name), when it has any. */
  cgroups: string[]
}

/** The value of `name` in a NUL-separated environment block (with a leading NUL), or undefined. */
function envValue(environ: Buffer, name: string): string | undefined {
  const key = Buffer.from(`\0${name}=`)
  const at = environ.indexOf(key)
  if (at < 0) return undefined
  const end = environ.indexOf(0, at + key.length)
  return environ.subarray(at + key.length, end < 0 ? undefined : end).toString()
}

/** Every pid in /proc but this process's. */
function otherPids(): number[] {
  try {
    return readdirSync('/proc')
      .map(Number)
      .filter((pid) => Number.isInteger(pid) && pid !== process.pid)
  } catch {
    return []
  }
}

/** `pid`'s environment block with a leading NUL (so every name is found as `\0NAME=`); undefined when unreadable. */
function environOf(pid: number): Buffer | undefined {
  try {
    return Buffer.concat([Buffer.from([0]), readFileSync(`/proc/${pid}/environ`)])
  } catch {
    return undefined
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

/** A state dir as one key whatever spelling of the state root reached it (a linked home, a relative ACTORS_HOME). */
export function stateDirKey(dir: string): string {
  try {
    return realpathSync(dir)
  } catch {
    return resolve(dir)
  }
}

/**
 * Every state dir that a live process still belongs to, by stateDirKey, with
 * those pids; one pass over /proc. A process belongs to the dir its
 * environment names (`ACTORS_STATE_DIR`, which every command of a Run
 * carries) and a Run's supervisor to the dir its command line names
 * (`dist/supervisor.cjs DIR KIND`): facts a Run cannot rewrite for a process
 * it did not start. This process is left out.
 */
export function liveStateDirs(): Map<string, number[]> {
  const named = new Map<string, number[]>()
  const add = (dir: string, pid: number) => {
    const list = named.get(dir)
    if (list) list.push(pid)
    else named.set(dir, [pid])
  }
  for (const pid of otherPids()) {
    const environ = environOf(pid)
    const dir = environ && envValue(environ, 'ACTORS_STATE_DIR')
    if (dir) add(dir, pid)
    try {
      const args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')
      const script = args.findIndex((arg, index) => index > 0 && arg.endsWith('/supervisor.cjs'))
      if (script > 0 && args[script + 1]) add(args[script + 1]!, pid)
    } catch {}
  }
  const byKey = new Map<string, number[]>()
  for (const [dir, pids] of named) {
    const key = stateDirKey(dir)
    byKey.set(key, [...(byKey.get(key) ?? []), ...pids])
  }
  return byKey
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
