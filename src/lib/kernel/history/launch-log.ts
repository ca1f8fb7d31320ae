/**
 * The launch log (`runs/.cache/launches.log`): one line per launch, `<time>
 * <run id>`, appended under the run index's lock, so it is in launch order.
 * `inspect --limit N` and `--since` read it from the end and stop early,
 * instead of reading every state dir. It is a cache: lines of pruned Runs are
 * skipped by readers, a relaunched id appears again (its newest line counts),
 * the index rebuild rewrites it from the state dirs, and prune compacts it
 * (compactLaunchLog), so it follows the Runs kept, not every launch ever.
 */
import {appendStateFile, makePrivateDir} from '../../base/platform/private-files.js'
import {closeSync, constants, lstatSync, openSync, readSync, fstatSync} from 'node:fs'
import {isActorsError} from '../../base/platform/errors.js'
import {join} from 'node:path'
import {isoTime} from '../../base/platform/builtins.js'
import {historyCacheDir} from '../../base/platform/home.js'
import {moveAside, readBoundedText, writeFileAtomic} from '../../base/platform/state-files.js'

const LOG_FILE = 'launches.log'
const CHUNK = 64 * 1024
/** A log larger than this is left as it is by compaction (it would be read whole); the next index rebuild rewrites it. */
const MAX_COMPACT_BYTES = 64 * 1024 * 1024

function logFile(home: string): string {
  return join(historyCacheDir(home), LOG_FILE)
}

/**
 * runs/.cache as a directory of its own before anything is written below it:
 * a link in its place (a Run can make one: the root is its user's to write)
 * would take the log's writes wherever it points, and a file there would
 * fail every launch. It holds only caches, so what is in its place is moved
 * aside and the cache starts again.
 */
function ensureCacheDir(home: string): void {
  const dir = historyCacheDir(home)
  const there = lstatSync(dir, {throwIfNoEntry: false})
  if (there && !there.isDirectory()) moveAside(dir)
  makePrivateDir(dir)
}

/** Append one launch of `id`. Caller holds the run index's lock. */
export function appendLaunch(home: string, id: string, at = new Date()): void {
  ensureCacheDir(home)
  const file = logFile(home)
  try {
    appendStateFile(file, `${isoTime(at)} ${id}\n`)
  } catch (error) {
    // No file in the log's place (a directory, a FIFO, a link): moved aside, and the log starts again.
    if (!isActorsError(error) && (error as NodeJS.ErrnoException).code !== 'EISDIR') throw error
    moveAside(file)
    appendStateFile(file, `${isoTime(at)} ${id}\n`)
  }
}

/** Replace the log with these launches (oldest first). Caller holds the run index's lock. */
export function rewriteLaunchLog(home: string, launches: Array<{at: string; id: string}>): void {
  ensureCacheDir(home)
  writeFileAtomic(logFile(home), launches.map((l) => `${l.at} ${l.id}\n`).join(''), {durable: false})
}

/**
 * Rewrite the log keeping, for each id `kept` still holds, its newest line
 * (in log order); lines of pruned Runs and older launches of a relaunched id
 * go. Atomic (a reader sees the old log or the new one). Caller holds the run
 * index's lock, which every append also takes, so no launch logged meanwhile
 * is lost. Returns how many lines were dropped.
 */
export function compactLaunchLog(home: string, kept: Set<string>): number {
  ensureCacheDir(home)
  const file = logFile(home)
  let text: string
  try {
    // Bounded, and never through a link (an oversized or linked log is left as it is).
    const read = readBoundedText(file, MAX_COMPACT_BYTES)
    if (read === undefined) return 0
    text = read
  } catch {
    return 0
  }
  const lines = text.split('\n')
  const newest = new Map<string, number>()
  lines.forEach((line, i) => {
    const parsed = parseLine(line)
    if (parsed && kept.has(parsed.id)) newest.set(parsed.id, i)
  })
  const keep = lines.filter((line, i) => {
    const parsed = parseLine(line)
    return parsed !== undefined && newest.get(parsed.id) === i
  })
  const dropped = lines.filter((line) => line !== '').length - keep.length
  if (dropped === 0) return 0
  writeFileAtomic(file, keep.map((line) => line + '\n').join(''), {durable: false})
  return dropped
}

export interface LaunchLine {
  id: string
  /** When the launch was logged (ISO). */
  at: string
}

/**
 * Launches newest first, each id once (its newest line). Undefined when there
 * is no log (callers then read the state dirs). Reads the file from the end
 * in chunks, so a caller that stops after N lines reads about N lines.
 */
export function recentLaunches(home: string): Iterable<LaunchLine> | undefined {
  let fd: number
  try {
    fd = openSync(logFile(home), constants.O_RDONLY | constants.O_NOFOLLOW)
  } catch {
    return undefined
  }
  return {
    *[Symbol.iterator]() {
      const seen = new Set<string>()
      try {
        let end = fstatSync(fd).size
        let carry = ''
        while (end > 0) {
          const start = Math.max(0, end - CHUNK)
          const buffer = Buffer.allocUnsafe(end - start)
          const read = readSync(fd, buffer, 0, end - start, start)
          const text = buffer.toString('utf8', 0, read) + carry
          const lines = text.split('\n')
          // The first piece may be a partial line: keep it for the next (earlier) chunk.
          carry = start > 0 ? lines.shift()! : ''
          for (let i = lines.length - 1; i >= 0; i--) {
            const line = parseLine(lines[i])
            if (!line || seen.has(line.id)) continue
            seen.add(line.id)
            yield line
          }
          end = start
        }
        const first = parseLine(carry)
        if (first && !seen.has(first.id)) yield first
      } finally {
        closeSync(fd)
      }
    },
  }
}

function parseLine(text: string): LaunchLine | undefined {
  const space = text.indexOf(' ')
  if (space <= 0) return undefined
  const id = text.slice(space + 1)
  return id ? {at: text.slice(0, space), id} : undefined
}
