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
import {basename} from 'node:path'
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

/** What is alive of the unit of the Run whose state dir is `dir` (see the module comment); one pass over /proc. */
export function findUnitByFacts(dir: string, homeKey: string): FoundUnit {
  const roots: number[] = []
  const cgroups = new Set<string>()
  let entries: string[] = []
  try {
    entries = readdirSync('/proc')
  } catch {}
  for (const entry of entries) {
    const pid = Number(entry)
    if (!Number.isInteger(pid) || pid === process.pid) continue
    let environ: Buffer
    try {
      environ = Buffer.concat([Buffer.from([0]), readFileSync(`/proc/${pid}/environ`)])
    } catch {
      continue
    }
    if (envValue(environ, 'ACTORS_STATE_DIR') !== dir) continue
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
