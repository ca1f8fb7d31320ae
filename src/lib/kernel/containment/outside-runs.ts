/**
 * Whether a process runs outside every Run, of any state root, by facts a
 * Run cannot change for a process it did not start: its cgroup is none the
 * kernel named after a Run, no ancestor is a supervisor (a Run's own or a
 * host) or a step wrapper, and its environment carries no Run's marker. The
 * supervision host takes a Run only from a launcher outside every Run, and a
 * launcher hands a Run only to a host outside every Run: either one inside
 * a Run would carry the Run's reach across its unit (a hosted Run started
 * with no parent, or units made inside the Run that ends them).
 */
import {readFileSync} from 'node:fs'
import {environOf, envValue} from '../../base/platform/process-environ.js'
import {ancestorsOf} from '../../base/platform/process-identity.js'
import {supervisorOfProcess} from '../../base/records/supervisor-args.js'
import {cgroupPathOf, runCgroupsOfPath} from './caller-cgroup.js'

/** True when process `pid` is outside every Run (see above); false when it is in one, or cannot be read. */
export function outsideEveryRun(pid: number): boolean {
  const path = cgroupPathOf(pid)
  if (path !== undefined && runCgroupsOfPath(path).length > 0) return false
  const environ = environOf(pid)
  if (!environ) return false
  if (envValue(environ, 'ACTORS_RUN_INSTANCE') || envValue(environ, 'ACTORS_STATE_DIR')) return false
  for (const ancestor of ancestorsOf(pid)) if (supervisorOfProcess(ancestor) || isStepWrapper(ancestor)) return false
  return true
}

/** The unit's `/bin/sh` wrapper of a step (or of a lock exec's COMMAND): `sh -c SCRIPT actors-run|actors-join ...`. */
function isStepWrapper(pid: number): boolean {
  try {
    const [shell, dashC, , name] = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')
    return shell === '/bin/sh' && dashC === '-c' && (name === 'actors-run' || name === 'actors-join')
  } catch {
    return false
  }
}
