/**
 * What a process hands down to the processes it starts, besides its
 * environment and working directory: its umask, credentials, capabilities,
 * no_new_privs and seccomp filters, CPU and memory-node affinity, resource
 * limits, nice value, scheduling policy and real-time priority, OOM score
 * adjustment, core dump filter and namespaces. A command started
 * by a supervision host gets the host's, not its launcher's: so a host takes a
 * Run only from a launcher whose are the same as its own
 * (supervisor/host.ts), and a launch from a shell with `umask 077`, `ulimit
 * -n 256`, `nice`, `taskset` or another namespace gets a supervisor of its
 * own, which inherits the launcher's as a child does. A host a Run started
 * with attributes of its choosing then serves no launch but one with the same.
 *
 * Not compared: the I/O priority (`ionice`), which /proc does not show; the
 * personality (`setarch`) and the timer slack, which it shows another
 * process of the user only where it may trace that one (Yama's default
 * denies it); cgroups, which the Run's unit decides. A Run that sets those on the host reaches
 * the Runs it supervises later (docs/runs.md).
 */
import {readFileSync, readlinkSync} from 'node:fs'

/** The lines of /proc/PID/status a child inherits. */
const STATUS_FIELDS = [
  'Umask',
  'Uid',
  'Gid',
  'Groups',
  'NoNewPrivs',
  'Seccomp',
  'Seccomp_filters',
  'CapInh',
  'CapPrm',
  'CapEff',
  'CapBnd',
  'CapAmb',
  'Cpus_allowed_list',
  'Mems_allowed_list',
]

/** The namespaces a child starts in (/proc/PID/ns). */
const NAMESPACES = ['mnt', 'pid', 'net', 'ipc', 'uts', 'user', 'cgroup']

/** Name → value of every inherited attribute of process `pid`; undefined when one cannot be read (gone, not ours). */
export function inheritedAttributes(pid: number): Map<string, string> | undefined {
  try {
    const found = new Map<string, string>()
    const wanted = new Set(STATUS_FIELDS)
    for (const line of readFileSync(`/proc/${pid}/status`, 'utf8').split('\n')) {
      const colon = line.indexOf(':')
      const name = line.slice(0, colon)
      if (colon > 0 && wanted.has(name))
        found.set(
          name.toLowerCase(),
          line
            .slice(colon + 1)
            .trim()
            .replace(/\s+/g, ' '),
        )
    }
    // "Max open files   1024   4096   files": the soft and hard limits, by name.
    for (const line of readFileSync(`/proc/${pid}/limits`, 'utf8').split('\n').slice(1)) {
      const match = /^(.+?)\s{2,}(\S+)\s+(\S+)/.exec(line)
      if (match) found.set(`limit "${match[1]}"`, `${match[2]} ${match[3]}`)
    }
    // stat's fields after the command name's closing parenthesis, the first being field 3: the nice value (19), the
    // real-time priority (40) and the scheduling policy (41: a Run could make the host SCHED_FIFO or SCHED_IDLE).
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    found.set('nice', fields[16] ?? '?')
    found.set('real-time priority', fields[37] ?? '?')
    found.set('scheduling policy', fields[38] ?? '?')
    found.set('oom_score_adj', readFileSync(`/proc/${pid}/oom_score_adj`, 'utf8').trim())
    found.set('coredump_filter', readFileSync(`/proc/${pid}/coredump_filter`, 'utf8').trim())
    for (const ns of NAMESPACES) found.set(`${ns} namespace`, readlinkSync(`/proc/${pid}/ns/${ns}`))
    return found
  } catch {
    return undefined
  }
}

/**
 * The first attribute in which process `pid` differs from this one, as
 * "umask 0077 (here 0022)"; undefined when none does. One that cannot be
 * read is a difference: nothing is known to be the same. This process's own
 * are read afresh each time: a Run can change a live host's limits and nice
 * value from outside (prlimit, renice).
 */
export function attributeDifference(pid: number): string | undefined {
  const own = inheritedAttributes(process.pid)
  const theirs = inheritedAttributes(pid)
  if (!own || !theirs) return 'its process attributes cannot be read'
  for (const [name, value] of own) {
    const other = theirs.get(name)
    if (other !== value) return `${name} ${other ?? 'unknown'} (here ${value})`
  }
  for (const name of theirs.keys()) if (!own.has(name)) return `${name} ${theirs.get(name)} (here unset)`
  return undefined
}
