/**
 * Who listens on an endpoint's socket, proven before a request is sent
 * (issue 35): a socket file in a Run's place proves nothing about its
 * listener. A Run that moved another process's socket file into its own
 * socket's place, published a sibling Run's live socket, or let a squatter
 * bind its temp-dir name had control records reach a listener that was not
 * its own. What proves it (base/platform/unix-listeners.ts): a socket
 * LISTENING at exactly the endpoint's path as it was bound (a renamed file
 * keeps the path its listener bound) is held by a process of the Run's unit
 * (containment/unit-facts.ts: its environment names the Run's state dir, or
 * it is a child of a supervisor of that dir, or a member of the unit by
 * facts). For a standalone service (no Run): held by the very process that
 * published the endpoint, checked by identity before.
 */
import {dirname} from 'node:path'
import type {Stats} from 'node:fs'
import {isAnotherRunsProcess} from '../../base/platform/process-tree.js'
import {boundFileInodes, holdsSocket, listenersBoundAt} from '../../base/platform/unix-listeners.js'
import {homeKey} from '../containment/index.js'
import {findUnitByFacts, isRunsProcess} from '../containment/unit-facts.js'

/**
 * The sockets listening at `path` as bound whose socket file is `file` (the
 * pinned one), or the reason none is to be trusted. Where `ss` is missing (or
 * does not list a listener), which file it bound is unknown: any listener
 * bound at the path.
 */
function listeners(path: string, file: Pick<Stats, 'ino'>): Set<number> | string {
  const inodes = listenersBoundAt(path)
  if (!inodes) return 'cannot be proven: /proc/net/unix is unreadable'
  if (inodes.size === 0)
    return 'has no listener bound at that path (a socket file renamed there from elsewhere, or a stale one)'
  const files = boundFileInodes()
  if (!files) return inodes
  // A listener ss did not list (a kernel without unix_diag, or one gone meanwhile) is known by its bound path only.
  const bound = new Set([...inodes].filter((inode) => (files.get(inode) ?? file.ino) === file.ino))
  if (bound.size === 0) return "is not the file its path's listener bound (another socket's file, renamed over it)"
  return bound
}

/**
 * Why the socket at `path` is not proven to be listened on by the Run in
 * `dir`, or undefined when it is (`file`: the socket file pinned). `hint`:
 * the pid the endpoint names (a claim, checked like any other process; it
 * spares a search of the unit).
 */
export function unprovenRunListener(
  path: string,
  file: Pick<Stats, 'ino'>,
  dir: string,
  hint?: unknown,
): string | undefined {
  const inodes = listeners(path, file)
  if (typeof inodes === 'string') return inodes
  if (typeof hint === 'number' && Number.isInteger(hint) && hint > 1 && hint !== process.pid) {
    if (holdsSocket(hint, inodes) && isRunsProcess(hint, dir)) return undefined
  }
  // A state dir is `<home>/runs/<id>`: the unit's cgroups are named under that home's key.
  // The unit by facts may reach into a child Run (a nested cgroup, a descendant): that Run's processes are not this one's.
  for (const pid of findUnitByFacts(dir, homeKey(dirname(dirname(dir)))).pids) {
    if (holdsSocket(pid, inodes) && !isAnotherRunsProcess(pid, dir)) return undefined
  }
  return "is listened on by no process of the Run (another process's socket)"
}

/** Why the socket at `path` is not proven to be listened on by process `pid` (a standalone service), or undefined. */
export function unprovenServiceListener(path: string, file: Pick<Stats, 'ino'>, pid: number): string | undefined {
  const inodes = listeners(path, file)
  if (typeof inodes === 'string') return inodes
  if (holdsSocket(pid, inodes)) return undefined
  return `is not listened on by the service's process (pid ${pid}), but by another process`
}
