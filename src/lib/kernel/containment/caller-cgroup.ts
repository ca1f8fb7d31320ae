/**
 * Which Run's cgroup the calling process is in (SPEC: Trees, owners and
 * limits: lineage comes from the unit, not the environment). The kernel names
 * a Run's cgroup after its id and instance, `<base>/actors/<home key>/<run
 * id>@<run instance>` (unit-path.ts runUnitName), and a nested Run's below its parent's,
 * so the innermost such name in a process's own cgroup path is the Run it
 * runs in, whatever its environment says. A `lock exec` unit
 * (`lock-<id>`) is not a Run: the walk looks past it to the Run around it.
 */
import {readFileSync} from 'node:fs'
import {basename} from 'node:path'
import type {LockHolderNote} from '../../base/platform/file-lock.js'
import {processEnvValue} from '../../base/platform/process-environ.js'
import {parseRunUnitName, unitAt} from './unit-path.js'

/** A Run's cgroup as its path names it. */
export interface RunCgroup {
  /** The Run's run_instance_id. */
  instance: string
  /** The state root's key (containment/index.ts homeKey). */
  homeKey: string
  /** The Run's cgroup, as /proc/<pid>/cgroup writes it (relative to the hierarchy's mount). */
  path: string
}

/** The innermost Run whose cgroup is `path` or one of its ancestors; undefined when none is. */
export function runOfCgroupPath(path: string): RunCgroup | undefined {
  const parts = path.split('/')
  for (let index = parts.length - 1; index >= 2; index--) {
    const unit = unitAt(parts, index)
    const named = unit && parseRunUnitName(unit.unit)
    if (named) return {instance: named.instance, homeKey: unit.homeKey, path: parts.slice(0, index + 1).join('/')}
  }
  return undefined
}

/**
 * The Run whose cgroup this process is in, from its cgroup2 line of
 * /proc/self/cgroup (`0::PATH`); undefined outside every Run's cgroup and
 * where there is no cgroup2 hierarchy (tracked containment).
 */
export function callerRunCgroup(): RunCgroup | undefined {
  return runCgroupOf('self')
}

/** The Run whose cgroup process `pid` is in, as callerRunCgroup for any process; undefined when none is (or it is gone). */
export function runCgroupOf(pid: number | 'self'): RunCgroup | undefined {
  let text: string
  try {
    text = readFileSync(`/proc/${pid}/cgroup`, 'utf8')
  } catch {
    return undefined
  }
  for (const line of text.split('\n')) if (line.startsWith('0::')) return runOfCgroupPath(line.slice(3))
  return undefined
}

/**
 * Which Run a lock's holder belongs to, for a busy error (platform/file-lock.ts):
 * its cgroup says so where Runs have cgroups; only a process in no Run's
 * cgroup is taken at its environment's word (tracked containment), and the
 * note says which of the two it went by.
 */
export function lockHolderNote(pid: number): LockHolderNote | undefined {
  const cgroup = runCgroupOf(pid)
  const run = cgroup && parseRunUnitName(cgroup.path.slice(cgroup.path.lastIndexOf('/') + 1))?.run
  if (run)
    return {what: `a process in the cgroup of Run ${run}`, fix: `end that Run (actors control ${run} kill), or retry`}
  const dir = cgroup ? undefined : processEnvValue(pid, 'ACTORS_STATE_DIR')
  if (!dir) return undefined
  const named = basename(dir)
  return {
    what: `a process whose environment names the Run in ${dir}`,
    fix: `end that Run (actors control ${named} kill), or retry`,
  }
}
