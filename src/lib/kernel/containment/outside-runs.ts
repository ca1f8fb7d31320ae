/**
 * Whether a process runs outside every Run, of any state root, by facts a
 * Run cannot change for a process it did not start. The supervision host
 * takes a Run only from a launcher outside every Run, and a launcher hands a
 * Run only to a host outside every Run: either one inside a Run would carry
 * the Run's reach across its unit (a hosted Run started with no parent, or
 * units made inside the Run that ends them).
 *
 * Looked at: the process, each of its ancestors, and the leader of the
 * process group and of the session of each of those. None may be in a
 * cgroup named after a Run (on any hierarchy), carry a Run's marker, be a
 * supervisor (a Run's own or a host) or a step wrapper; and a leader must
 * be alive. A process a Run started and then cut loose (a double fork with
 * a cleared environment, out of the Run's cgroup2 unit as root) keeps the
 * Run's group and session, whose leader is the Run's wrapper, or a leader
 * gone, which proves nothing: either way it is not shown to be outside.
 */
import {readFileSync} from 'node:fs'
import {environOf, envValue} from '../../base/platform/process-environ.js'
import {lineageWithLeaders} from '../../base/platform/process-identity.js'
import {supervisorOfProcess} from '../../base/records/supervisor-args.js'
import {inAnyRunCgroup} from './caller-cgroup.js'
import {ownProcess} from './escapes.js'

/** True when process `pid` is outside every Run (see above); false when it is in one, or cannot be read. */
export function outsideEveryRun(pid: number): boolean {
  // A member gone meanwhile proves nothing; a leader outside this pid namespace (a container's) is no Run's.
  for (const at of lineageWithLeaders(pid)) if (at === undefined || !outsideAsItself(at, at === pid)) return false
  return true
}

/**
 * Whether process `pid` itself is alive, in no Run's cgroup and carries no
 * Run's marker, and (when it is not the process asked about, which may be a
 * host) is no supervisor and no step wrapper. Another user's process, whose
 * environment cannot be read (an sshd above a login shell), carries no
 * marker of this user's Runs; the process asked about must be readable.
 */
function outsideAsItself(pid: number, asked: boolean): boolean {
  if (inAnyRunCgroup(pid) !== false) return false
  const environ = environOf(pid)
  if (!environ && (asked || ownProcess(pid))) return false
  if (environ && carriesARunsMarker(environ)) return false
  return asked || (!supervisorOfProcess(pid) && !isStepWrapper(pid))
}

/** Whether an environment (`/proc/PID/environ`) carries a Run's marker: its instance or its state dir. */
export function carriesARunsMarker(environ: Buffer): boolean {
  return Boolean(envValue(environ, 'ACTORS_RUN_INSTANCE') || envValue(environ, 'ACTORS_STATE_DIR'))
}

/** The unit's `/bin/sh` wrapper of a step (or of a lock exec's COMMAND): `sh -c SCRIPT actors-run|actors-join ...`. */
export function isStepWrapper(pid: number): boolean {
  try {
    return isStepWrapperCommand(readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0'))
  } catch {
    return false
  }
}

/** Whether a command line (`/proc/PID/cmdline`, split at NUL) is a step wrapper's (isStepWrapper). */
export function isStepWrapperCommand(args: readonly string[]): boolean {
  const [shell, dashC, , name] = args
  return shell === '/bin/sh' && dashC === '-c' && (name === 'actors-run' || name === 'actors-join')
}
