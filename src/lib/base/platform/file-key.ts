/**
 * A file's key: its inode, size, mtime and ctime (ms), four numbers that
 * change when the file is replaced (rename) or written in place. Caches of
 * what a file says are valid while its key is unchanged (history/listing-cache.ts).
 *
 * A listing takes one key per Run (2,000 run.json files for 2,000 Runs), so
 * the per-call cost matters: on Node 20 fs.statSync() builds a Stats object
 * and four Dates per call, which with the garbage they leave cost more than
 * the stat(2) itself (2,000 keys: about 35 ms of CPU less without them, most
 * of a listing's cost beyond start-up). Node's fs binding fills one shared
 * array instead. That binding is internal (process.binding is deprecated,
 * documentation-only: DEP0111), so it is trusted only after it agreed with
 * statSync on the first file asked for, only on the Node majors it was
 * checked on, never when Node was asked to warn about it
 * (--pending-deprecation), and any surprise (a throw, another
 * layout) sends this process back to statSync for good. Either way the key
 * is the same four numbers, so caches written by one path serve the other.
 * The exact key (exactFileKeysInto) is the same facts unrounded, six
 * numbers, for a cache that keys many files at once.
 */
import {statSync} from 'node:fs'

/** inode, size, mtime and ctime (ms) of a regular file. */
export type FileKey = [number, number, number, number]

/** The slice of Node's fs binding used here: stat(path, bigint, request, throwIfNoEntry) into a shared array. */
interface StatBinding {
  stat(path: string, bigint: false, request: undefined, throwIfNoEntry: false): Float64Array | undefined
}

/** The fs binding while it is trusted; null once it is not (or cannot be had); undefined: not tried yet. */
let binding: StatBinding | null | undefined

const S_IFMT = 0o170000
const S_IFREG = 0o100000

/** The key of `file`, or undefined when it is not a regular file (missing, a directory, unreadable path). */
export function fileKey(file: string): FileKey | undefined {
  if (binding === undefined) return firstKey(file)
  if (binding === null) return keyByStatSync(file)
  let stats
  try {
    stats = binding.stat(file, false, undefined, false)
  } catch {
    // ENOTDIR, EACCES and the like: like statSync, not a regular file we can key.
    return undefined
  }
  if (stats === undefined) return undefined
  // The same arithmetic as Node's own Stats (seconds and nanoseconds to ms), so both paths give equal keys.
  return (stats[1] & S_IFMT) === S_IFREG
    ? [stats[7], stats[8], stats[12] * 1000 + stats[13] / 1e6, stats[14] * 1000 + stats[15] / 1e6]
    : undefined
}

/**
 * A file's exact key: inode, size, mtime and ctime as whole seconds and
 * nanoseconds (what stat(2) says, unrounded), six numbers. What
 * exactFileKeysInto() writes.
 */
export const EXACT_KEY_LENGTH = 6

const NS_PER_SECOND = 1_000_000_000n

/** The binding's stat array last seen, and views of its inode and size, and of its mtime and ctime (see exactFileKeysInto). */
let viewed: Float64Array | undefined
let inodeAndSize: Float64Array = new Float64Array(2)
let times: Float64Array = new Float64Array(4)

/**
 * The exact keys of `dir + name + suffix` for each of `names`, written into
 * `into`, six numbers per name in order (NaN for a file that is not
 * regular). For a listing that keys 2,000 run.json files against a cache
 * (history/listing-text.ts), so no number is made per file: through the
 * binding each key is two typed-array copies from its stat array (reading
 * the numbers out one by one and computing ms, as fileKey() does, cost
 * 2,000 files about 5 ms more). Through statSync the same numbers come from
 * its bigint times, so caches written by one path serve the other.
 *
 * The binding's loop is kept small, with no call per file of a function of
 * ours, and the rest of the work in this function: V8 compiles a function
 * with its optimizing compiler once it ran enough bytecode for its size,
 * which for 2,000 files cost this short process more than it saved (about
 * 8 ms of a listing on a 2-core machine, measured against --no-opt).
 */
export function exactFileKeysInto(dir: string, names: readonly string[], suffix: string, into: Float64Array): void {
  // The first key decides whether the binding is trusted (see firstKey).
  if (binding === undefined && names.length > 0) fileKey(dir + names[0] + suffix)
  const fs = binding
  for (let i = 0, at = 0; fs && i < names.length; i++, at += EXACT_KEY_LENGTH) {
    let stats
    try {
      stats = fs.stat(dir + names[i] + suffix, false, undefined, false)
    } catch {
      // ENOTDIR, EACCES and the like: like statSync, not a regular file we can key.
    }
    if (stats === undefined || (stats[1] & S_IFMT) !== S_IFREG) {
      into.fill(NaN, at, at + EXACT_KEY_LENGTH)
      continue
    }
    if (stats !== viewed) viewStats(stats)
    into.set(inodeAndSize, at)
    into.set(times, at + 2)
  }
  for (let i = 0, at = 0; !fs && i < names.length; i++, at += EXACT_KEY_LENGTH) {
    let stat
    try {
      stat = statSync(dir + names[i] + suffix, {bigint: true, throwIfNoEntry: false})
    } catch {}
    if (!stat?.isFile()) {
      into.fill(NaN, at, at + EXACT_KEY_LENGTH)
      continue
    }
    // Whole seconds and nanoseconds as stat(2) has them: the nanoseconds never negative.
    const parts = (ns: bigint) => {
      const seconds = ns / NS_PER_SECOND - (ns % NS_PER_SECOND < 0n ? 1n : 0n)
      return [Number(seconds), Number(ns - seconds * NS_PER_SECOND)]
    }
    into.set([Number(stat.ino), Number(stat.size), ...parts(stat.mtimeNs), ...parts(stat.ctimeNs)], at)
  }
}

/** Views of the binding's stat array `stats`: fields 7 and 8 (inode, size), 12 to 15 (mtime, ctime: seconds, nanoseconds), as fileKey() reads them. */
function viewStats(stats: Float64Array): void {
  viewed = stats
  inodeAndSize = new Float64Array(stats.buffer, stats.byteOffset + 7 * 8, 2)
  times = new Float64Array(stats.buffer, stats.byteOffset + 12 * 8, 4)
}

function keyByStatSync(file: string): FileKey | undefined {
  let stat
  try {
    stat = statSync(file, {throwIfNoEntry: false})
  } catch {
    return undefined
  }
  return stat?.isFile() ? [stat.ino, stat.size, stat.mtimeMs, stat.ctimeMs] : undefined
}

/** The first key: through statSync, and the binding is trusted from now on only if it gives the same. */
function firstKey(file: string): FileKey | undefined {
  const key = keyByStatSync(file)
  binding = null
  if (key === undefined || bindingRuledOut()) return key
  try {
    binding = (process as unknown as {binding(name: string): StatBinding}).binding('fs')
    const other = fileKey(file)
    if (!other || other.some((value, i) => value !== key[i])) binding = null
  } catch {
    binding = null
  }
  return key
}

/**
 * The Node majors whose fs binding was checked (CI runs every test on 20 and
 * 24). A binding's C++ side aborts the process on arguments it does not
 * expect, which no fallback can catch, so a Node this code has not met uses
 * statSync until it is added here.
 */
const CHECKED_NODE_MAJORS = new Set([20, 22, 24])

/** Whether the binding must not be used: a Node not checked, or one that would warn about process.binding (--pending-deprecation). */
function bindingRuledOut(): boolean {
  return (
    !CHECKED_NODE_MAJORS.has(Number(process.versions.node.split('.')[0])) ||
    typeof (process as {binding?: unknown}).binding !== 'function' ||
    process.env.NODE_PENDING_DEPRECATION === '1' ||
    process.execArgv.includes('--pending-deprecation') ||
    (process.env.NODE_OPTIONS ?? '').includes('--pending-deprecation')
  )
}
