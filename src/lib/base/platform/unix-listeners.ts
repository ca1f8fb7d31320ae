/**
 * Which process listens on a Unix socket, from facts the kernel (Linux) keeps
 * and no file can change (issue 35: a socket file proves nothing about its
 * listener; a Run that renamed another process's socket into its own place
 * had control records reach that process). /proc/net/unix lists every bound
 * socket of this network namespace with the path it was bound at (a rename of
 * its file leaves that path as it was) and its sockfs inode, which each
 * process holding it shows as a `socket:[INODE]` link in /proc/PID/fd.
 * Which FILE a listener bound is not in /proc at all: only the sock_diag
 * netlink interface tells it, which `ss -e` (iproute2) prints as `ino:N`.
 */
import {existsSync, readdirSync, readFileSync, readlinkSync} from 'node:fs'
import {childProcess} from './builtins.js'

/** `__SO_ACCEPTCON` in the Flags column: the socket listens. */
const LISTENING = 0x10000

/**
 * The sockfs inodes of the sockets listening at exactly the bound path
 * `path`; empty when none does, undefined when /proc/net/unix cannot be read.
 * A line whose path holds a newline is split by /proc itself: it never
 * matches a path read from a JSON field that has none, and one that has is
 * never proven.
 */
export function listenersBoundAt(path: string): Set<number> | undefined {
  let table: string
  try {
    table = readFileSync('/proc/net/unix', 'utf8')
  } catch {
    return undefined
  }
  const found = new Set<number>()
  if (path.includes('\n')) return found
  for (const line of table.split('\n')) {
    // Num: RefCount Protocol Flags Type St Inode Path; the path is the rest of the line, spaces and all.
    const match =
      /^\s*[0-9A-Fa-f]+: [0-9A-Fa-f]+ [0-9A-Fa-f]+ ([0-9A-Fa-f]+) [0-9A-Fa-f]+ [0-9A-Fa-f]+ +(\d+) (.*)$/.exec(line)
    if (!match || match[3] !== path) continue
    if ((Number.parseInt(match[1], 16) & LISTENING) !== 0) found.add(Number(match[2]))
  }
  return found
}

/** Where iproute2 installs `ss`: looked up there only, never on a PATH the caller's environment chose. */
const SS_PATHS = ['/usr/sbin/ss', '/sbin/ss', '/usr/bin/ss', '/bin/ss']

/**
 * The file each listening Unix socket was bound to: sockfs inode → the inode
 * number of its socket file (`ss -xlHe`, UNIX_DIAG_VFS), so a file can be
 * told from another listener's file moved into its place. Undefined when
 * `ss` is not installed, fails or names no file (then only the bound path is
 * known).
 */
export function boundFileInodes(): Map<number, number> | undefined {
  const ss = SS_PATHS.find((path) => existsSync(path))
  if (!ss) return undefined
  // node:child_process loaded on first use, not execa (./execa.ts): `control RUN ACTION` is a hot command, and
  // evaluating execa would add about 40 ms to every control of a Run with an endpoint.
  const r = childProcess().spawnSync(ss, ['-x', '-l', '-H', '-n', '-e'], {
    encoding: 'utf8',
    timeout: 2000,
    env: {LC_ALL: 'C'},
  })
  if (r.status !== 0 || typeof r.stdout !== 'string') return undefined
  const files = new Map<number, number>()
  for (const line of r.stdout.split('\n')) {
    // `u_str LISTEN 0 511 PATH SOCKINO * 0 <-> ino:FILEINO dev:A/B peers:`; the path may hold spaces, so match from the end.
    const match = /^.*\s(\d+)\s+\*\s+0\s+<->\s+ino:(\d+)\s+dev:/.exec(line)
    if (match) files.set(Number(match[1]), Number(match[2]))
  }
  // None at all: this ss read /proc/net/unix itself (a kernel without unix_diag), which names no files.
  return files.size > 0 ? files : undefined
}

/**
 * Whether process `pid` holds one of the sockets `inodes` (an fd linking to
 * `socket:[INODE]`). Reads that one process's fd table; false when it cannot
 * be read (gone, or another user's).
 */
export function holdsSocket(pid: number, inodes: ReadonlySet<number>): boolean {
  if (inodes.size === 0) return false
  let fds: string[]
  try {
    fds = readdirSync(`/proc/${pid}/fd`)
  } catch {
    return false
  }
  for (const fd of fds) {
    let target: string
    try {
      target = readlinkSync(`/proc/${pid}/fd/${fd}`)
    } catch {
      continue
    }
    const inode = /^socket:\[(\d+)\]$/.exec(target)?.[1]
    if (inode !== undefined && inodes.has(Number(inode))) return true
  }
  return false
}
