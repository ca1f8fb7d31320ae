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
  return runCgroupsOfPath(path)[0]
}

/**
 * Every cgroup along `path` named like a Run's unit, innermost first. A
 * nested Run's unit lies below its parent's in the same layout, so a name
 * alone cannot tell it from a cgroup a Run made below its own and named
 * after another Run: a caller that acts on the name checks the Run's record.
 */
export function runCgroupsOfPath(path: string): RunCgroup[] {
  const parts = path.split('/')
  const found: RunCgroup[] = []
  for (let index = parts.length - 1; index >= 2; index--) {
    const unit = unitAt(parts, index)
    const named = unit && parseRunUnitName(unit.unit)
    if (named) found.push({instance: named.instance, homeKey: unit.homeKey, path: parts.slice(0, index + 1).join('/')})
  }
  return found
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
  const path = cgroupPathOf(pid)
  return path === undefined ? undefined : runOfCgroupPath(path)
}

/**
 * The cgroup paths of process `pid`, one per hierarchy line of
 * /proc/PID/cgroup (`ID:CONTROLLERS:PATH`), each with its `ID:CONTROLLERS`
 * (`0:` for cgroup2); undefined when it is gone.
 */
function cgroupLines(pid: number | 'self'): Array<{hierarchy: string; path: string}> | undefined {
  let text: string
  try {
    text = readFileSync(`/proc/${pid}/cgroup`, 'utf8')
  } catch {
    return undefined
  }
  return text.split('\n').flatMap((line) => {
    const at = line.indexOf(':', line.indexOf(':') + 1)
    return at < 0 ? [] : [{hierarchy: line.slice(0, at), path: line.slice(at + 1)}]
  })
}

/** Process `pid`'s cgroup2 path (`0::PATH` of /proc/PID/cgroup); undefined when it has none or is gone. */
export function cgroupPathOf(pid: number | 'self'): string | undefined {
  return cgroupLines(pid)?.find((line) => line.hierarchy === '0:')?.path
}

/**
 * Whether process `pid` is in a cgroup named after a Run on any hierarchy
 * of /proc/PID/cgroup (cgroup2 and every v1 controller: a process that left
 * a Run's cgroup2 unit as root stays in its v1 ones); undefined when it is
 * gone.
 */
export function inAnyRunCgroup(pid: number): boolean | undefined {
  return cgroupLines(pid)?.some(({path}) => path.startsWith('/') && runCgroupsOfPath(path).length > 0)
}
