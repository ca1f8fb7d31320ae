/**
 * The supervision host (the default, unless `ACTORS_SUPERVISION=run`): one process per state
 * root, `node dist/supervisor.cjs --host HOME`, supervises every local Run
 * of that root launched by `actors run` (services/supervisor/host.ts). Where
 * it listens, and how a reader proves that it supervises one Run: its
 * command line names the root (supervisor-args.ts), and it holds the Run's
 * state dir open (a directory descriptor) from before it records itself in
 * run.json until the Run's end is written. A process's open descriptors are
 * the kernel's to tell (/proc/PID/fd), and a Run cannot open one in another
 * process, so a host is never believed by its pid or its command line alone.
 */
import {readdirSync, readFileSync, readlinkSync} from 'node:fs'
import {join, resolve} from 'node:path'
import {stateDirKey} from '../platform/home.js'

/** The host's private dir in the state root (0700; refused when a link). */
export function supervisionDir(home: string): string {
  return join(home, 'supervision')
}

/** The unix socket a launcher hands a Run to the host over. */
export function hostSocketPath(home: string): string {
  return join(supervisionDir(home), 'host.sock')
}

/** Taken while a host binds the socket or leaves it: two hosts of one root never listen at once. */
export function hostLockPath(home: string): string {
  return join(supervisionDir(home), 'host.lock')
}

/** `{pid, identity}` of the host that listens now, written under the host lock. */
export function hostRecordPath(home: string): string {
  return join(supervisionDir(home), 'host.json')
}

/** Where each descriptor process `pid` holds open points (/proc/PID/fd): a path, or `type:[inode]`. */
function descriptorTargets(pid: number): string[] {
  let fds: string[]
  try {
    fds = readdirSync(`/proc/${pid}/fd`)
  } catch {
    return []
  }
  const targets: string[] = []
  for (const fd of fds) {
    try {
      targets.push(readlinkSync(`/proc/${pid}/fd/${fd}`))
    } catch {}
  }
  return targets
}

/** The directories process `pid` holds open, by stateDirKey: for a host, the state dirs it supervises. */
export function heldDirs(pid: number): string[] {
  // Sockets, pipes and anonymous inodes read as `type:[inode]`; a removed dir as `... (deleted)`.
  return descriptorTargets(pid).filter((target) => target.startsWith('/') && !target.endsWith(' (deleted)'))
}

/** Whether host process `pid` of the root `home` supervises the Run in `dir`: a state dir of that root it holds open. */
export function hostHoldsDir(pid: number, home: string, dir: string): boolean {
  const key = stateDirKey(dir)
  if (stateDirKey(resolve(key, '..', '..')) !== stateDirKey(home)) return false
  return heldDirs(pid).includes(key)
}

/**
 * The environment settings the kernel reads in the supervising process (containment, cgroup bases, test faults),
 * as one comparable text. A host takes a Run only from a launch whose settings are its own: a launch asking for
 * tracked containment, say, gets a supervisor of its own rather than a host started under other settings.
 */
export function kernelSettings(env: NodeJS.ProcessEnv): string {
  const names = Object.keys(env).filter((name) => /^ACTORS_(CONTAINMENT|CGROUP|TEST_)/.test(name))
  return JSON.stringify(names.sort().map((name) => [name, env[name]]))
}

/** The socket inodes process `pid` holds open (`socket:[INODE]` in /proc/PID/fd). */
function socketInodes(pid: number): Set<string> {
  return new Set(descriptorTargets(pid).flatMap((target) => /^socket:\[(\d+)\]$/.exec(target)?.[1] ?? []))
}

/**
 * Whether every unix socket listening at `socketPath` (/proc/net/unix) is held by process `pid`, and there is
 * one. A listener another process put at the host's socket (a Run that replaced the file) fails it: a launcher
 * then hands it nothing.
 */
export function socketHeldOnlyBy(pid: number, socketPath: string): boolean {
  let table: string
  try {
    table = readFileSync('/proc/net/unix', 'utf8')
  } catch {
    return false
  }
  const held = socketInodes(pid)
  let found = false
  for (const line of table.split('\n').slice(1)) {
    // Num RefCount Protocol Flags Type St Inode Path (the path, when there is one, is the rest of the line).
    // Listening ones only (flags __SO_ACCEPTCON): a connection the host accepted and closed can outlive its descriptor.
    const fields = line.trim().split(/\s+/)
    if (fields.length < 8 || fields[3] !== '00010000' || fields.slice(7).join(' ') !== socketPath) continue
    if (!held.has(fields[6])) return false
    found = true
  }
  return found
}
