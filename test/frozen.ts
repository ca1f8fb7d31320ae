/**
 * Whether a process is paused the way `actors control RUN pause` pauses it:
 * stopped (T in /proc, tracked containment) or in a frozen cgroup
 * (cgroup.freeze, SPEC: Containment).
 */
import {readFileSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {readJson} from './helpers.js'

/** The cgroup2 directory `pid` is in, from /proc/<pid>/cgroup and this machine's mounts. */
function unifiedDirOf(pid: number): string | undefined {
  try {
    const line = readFileSync(`/proc/${pid}/cgroup`, 'utf8')
      .split('\n')
      .find((l) => l.startsWith('0::'))
    const mount = readFileSync('/proc/self/mountinfo', 'utf8')
      .split('\n')
      .find((l) => l.includes(' - cgroup2 '))
    if (!line || !mount) return undefined
    return join(mount.split(' ')[4], line.slice(3))
  } catch {
    return undefined
  }
}

/** True when `pid` is stopped or frozen. */
export function isPaused(pid: number): boolean {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  if (stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) === 'T') return true
  const dir = unifiedDirOf(pid)
  try {
    return dir !== undefined && /^frozen 1$/m.test(readFileSync(join(dir, 'cgroup.events'), 'utf8'))
  } catch {
    return false
  }
}

/**
 * Continue a paused Run's command behind the kernel's back: thaw its cgroup and SIGCONT its group. Both, as a
 * pause that lands while a step's wrapper is still joining the cgroup stops that wrapper with SIGSTOP instead.
 */
export function continueBehindTheKernel(stateDir: string): void {
  const meta = readJson(join(stateDir, 'run.json'))
  if (meta.containment?.kind === 'cgroup') writeFileSync(join(meta.containment.path, 'cgroup.freeze'), '0')
  try {
    process.kill(-meta.pgid, 'SIGCONT')
  } catch {} // the thaw may have let the group end already
}
