/**
 * A Run's output: the tail of its log files, and following them as they grow.
 * Following is driven by file-system notifications on the state dir (the
 * supervisor appends to the logs and rewrites run.json when it ends), with a
 * slow safety poll for file systems that do not notify.
 */
import {closeSync, constants, lstatSync, openSync, readSync} from 'node:fs'
import {corruptStateError} from '../../base/platform/errors.js'
import {readFileEnd} from '../../base/platform/state-files.js'
import {readRunMetaRaw, readRunState, runFile} from './store.js'
import {askExecutor} from './executor-questions.js'
import {isTerminal} from '../../base/records/run.js'
import {Doorbell} from '../../base/bell/doorbell.js'

export type StreamName = 'stdout' | 'stderr'

/** The last `lines` lines of a file (reads at most `maxBytes` from its end). */
export function tailFile(file: string, lines: number, maxBytes = 4 * 1024 * 1024): string {
  const read = readFileEnd(file, maxBytes)
  const text = read ? read.bytes.toString('utf8', 0, read.length) : ''
  // An empty log has no line to show (not a blank one).
  if (lines <= 0 || text === '') return ''
  const parts = text.split('\n')
  const trailing = parts[parts.length - 1] === '' ? parts.pop() : undefined
  const kept = parts.slice(-lines).join('\n')
  return trailing === undefined ? kept : kept + '\n'
}

/** The last `chars` characters of a Run's stdout (used for completion batch rows). */
export function outputTail(dir: string, chars: number): string {
  // A little more than needed, so a multi-byte character cut at the start can be dropped. Most logs are smaller:
  // read whole with no stat (a batch reads 64 of them).
  const read = readFileEnd(runFile(dir, 'stdout'), chars * 4)
  if (read === undefined) return ''
  const text = read.bytes.toString('utf8', 0, read.length)
  return text.length > chars ? text.slice(-chars) : text
}

/** The first line of the Run's stdout with any text (read from its first 4 KiB), or '' when there is none. */
export function firstOutputLine(dir: string): string {
  const file = runFile(dir, 'stdout')
  let size: number
  try {
    size = lstatSync(file).size
  } catch {
    return ''
  }
  const head = readRange(file, 0, Math.min(size, 4096))
  return head.split('\n').find((line) => line.trim() !== '') ?? ''
}

/**
 * Size of a log file: 0 when it does not exist yet; a directory or other
 * non-regular file where a log belongs fails closed, naming it.
 */
function logSize(file: string): number {
  return logStat(file).size
}

/** A log's size and when it was last written (0 and 0 when it does not exist yet). */
function logStat(file: string): {size: number; mtimeMs: number; ino: number} {
  let stat
  try {
    // lstat: a link where a log belongs is not a regular file, and is named (never read through).
    stat = lstatSync(file)
  } catch {
    return {size: 0, mtimeMs: 0, ino: 0}
  }
  if (!stat.isFile())
    throw corruptStateError(file, stat.isDirectory() ? 'is a directory, not a file' : 'is not a regular file')
  return stat
}

function readRange(file: string, start: number, end: number): string {
  return readBytes(file, start, end).toString('utf8')
}

function readBytes(file: string, start: number, end: number): Buffer {
  if (end <= start) return Buffer.alloc(0)
  const fd = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK)
  try {
    const buffer = Buffer.alloc(end - start)
    const read = readSync(fd, buffer, 0, buffer.length, start)
    return buffer.subarray(0, read)
  } finally {
    closeSync(fd)
  }
}

/** Most bytes one followed chunk holds, so a Run writing fast never makes us read gigabytes at once. */
const MAX_FOLLOW_CHUNK = 1024 * 1024

/**
 * How many bytes of `bytes` to hand out now: up to the last newline while the
 * Run goes on (lines stay whole), else everything but an unfinished UTF-8
 * character at the end. Offsets advance by these bytes, never by the length of
 * the decoded text (invalid bytes decode to 3-byte replacement characters).
 */
function completeLength(bytes: Buffer, ended: boolean): number {
  if (ended) return bytes.length
  const newline = bytes.lastIndexOf(10)
  if (newline >= 0) return newline + 1
  // Hold back a lead byte whose continuation bytes have not been written yet.
  for (let back = 1; back <= Math.min(3, bytes.length); back++) {
    const byte = bytes[bytes.length - back]
    if ((byte & 0xc0) === 0x80) continue
    const need = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1
    return need > back ? bytes.length - back : bytes.length
  }
  return bytes.length
}

export interface OutputChunk {
  stream: StreamName
  text: string
  /** The bytes as written (set when followed): plain output passes them on unchanged, whatever their encoding. */
  bytes?: Buffer
}

/**
 * A followed log that no longer holds what was read from it: `shrank`
 * (shorter than what was read: truncated in place), `rewritten` (truncated
 * and written past the old size between two looks: the bytes before the
 * offset changed), `replaced` (another file under its name).
 */
export interface LogShrank {
  file: string
  /** Bytes read from it so far. */
  read: number
  /** Its size now. */
  size: number
  how: 'shrank' | 'rewritten' | 'replaced'
}

/** How many bytes before the read offset a follower keeps to see that a log was rewritten under it. */
const TAIL_BYTES = 64

/** What a follower knows of one log: where it read to, the bytes just before, the file and its mtime then. */
interface FollowedLog {
  offset: number
  tail: Buffer
  ino: number
  mtimeMs: number
}

/** A log just opened for following at `offset`. */
function followedLog(file: string, offset: number): FollowedLog {
  const {ino, mtimeMs} = logStat(file)
  return {offset, tail: readBytes(file, Math.max(0, offset - TAIL_BYTES), offset), ino, mtimeMs}
}

/**
 * Whether the log no longer holds what was read from it (see LogShrank), or
 * undefined. A size check alone misses a log truncated and written past its
 * old size between two looks (its first lines after the cut were lost
 * unsaid): so the file's identity, and, when it changed since the last look,
 * the bytes just before the offset are checked too.
 */
function cutUnder(file: string, stat: {size: number; mtimeMs: number; ino: number}, log: FollowedLog) {
  if (log.offset === 0) return undefined
  if (stat.size < log.offset) return 'shrank'
  if (stat.ino !== log.ino) return 'replaced'
  if (stat.size === log.offset && stat.mtimeMs === log.mtimeMs) return undefined
  return readBytes(file, log.offset - log.tail.length, log.offset).equals(log.tail) ? undefined : 'rewritten'
}

/**
 * Yield output of the Run in `dir` as it is written, from `fromStart` (or the
 * current end), until the Run is terminal and everything written was yielded.
 * A log that shrank (`truncate -s 0 stdout.log`, a rotation in place), or
 * was rewritten or replaced under us (cutUnder), is followed again from its
 * start, as `tail -F` does: all it holds now was written after the cut (to
 * nothing, the usual case), and output written between the cut and our look
 * is not lost. `onShrink` hears of each cut.
 */
export async function* followRunOutput(
  dir: string,
  streams: StreamName[],
  fromStart = true,
  signal?: AbortSignal,
  onShrink?: (shrank: LogShrank) => void,
): AsyncGenerator<OutputChunk> {
  const logs = new Map<StreamName, FollowedLog>()
  for (const stream of streams) {
    const file = runFile(dir, stream)
    logs.set(stream, followedLog(file, fromStart ? 0 : logSize(file)))
  }
  // Woken by changes in the Run's dir (log appends, run.json rewritten at the end), else a 1 s safety poll;
  // a remote Run's writes notify nobody here, so it is polled as often as its executor says.
  const bell = new Doorbell(dir, followPollMs(dir) ?? 1000)
  try {
    while (!signal?.aborted) {
      bell.clear()
      let ended = false
      try {
        const state = readRunState(dir, {withResult: false})
        // A state dir gone (removed or moved by the Run) has no logs left to follow: its readers say so.
        if (!state) return
        ended = isTerminal(state.meta.status)
      } catch {
        ended = true
      }
      // What each log gained since the last look. Both may have: the one written to last comes last, so lines
      // keep the order they were written in as far as two logs can tell (a follower busy for a moment, such as
      // a view loading, would otherwise print stdout's new lines before stderr's older ones).
      const gained: Array<OutputChunk & {mtimeMs: number}> = []
      for (const stream of streams) {
        const file = runFile(dir, stream)
        const stat = logStat(file)
        const {size, mtimeMs} = stat
        const log = logs.get(stream)!
        // A log gone (its dir being removed by the Run) is no cut: the next look finds the dir gone, or the log back.
        const how = stat.ino === 0 ? undefined : cutUnder(file, stat, log)
        if (how) {
          onShrink?.({file, read: log.offset, size, how})
          log.offset = 0
          log.tail = Buffer.alloc(0)
        }
        log.ino = stat.ino
        log.mtimeMs = mtimeMs
        const from = log.offset
        if (size > from) {
          // Cut at the last newline so lines are never split across chunks (unless the Run ended).
          const bytes = readBytes(file, from, Math.min(size, from + MAX_FOLLOW_CHUNK))
          const length = completeLength(bytes, ended && size <= from + MAX_FOLLOW_CHUNK)
          if (length > 0) {
            const piece = bytes.subarray(0, length)
            log.offset = from + length
            log.tail = Buffer.from(Buffer.concat([log.tail, piece]).subarray(-TAIL_BYTES))
            gained.push({stream, text: piece.toString('utf8'), bytes: piece, mtimeMs})
          }
        }
      }
      gained.sort((a, b) => a.mtimeMs - b.mtimeMs)
      for (const {mtimeMs, ...chunk} of gained) yield chunk
      const any = gained.length > 0
      if (ended && !any) return
      if (!any) await bell.next(Infinity, signal)
    }
  } finally {
    bell.close()
  }
}

export interface LogPage {
  /** The page as text: whole UTF-8 characters only, so pages concatenate to the file's exact text. */
  text: string
  offset: number
  /** Where the next page starts (offset + the bytes of `text`). */
  next_offset: number
  /** The file's size when read. */
  size: number
  /** next_offset reached the end of the file as it was when read. */
  eof: boolean
}

/**
 * Bytes [offset, offset + limitBytes) of a log file, as a page that ends on a
 * character boundary (an unfinished UTF-8 character moves to the next page).
 * `fits(text)` may shrink the page further (the MCP result cap); the page
 * always advances unless the file has nothing past `offset`.
 */
export function readLogPage(
  file: string,
  offset: number,
  limitBytes: number,
  fits: (text: string) => boolean = () => true,
): LogPage {
  const size = logSize(file)
  const from = Math.min(Math.max(0, offset), size)
  // Up to 3 bytes more than asked, so a page never has to end inside its first character.
  const bytes = readBytes(file, from, Math.min(size, from + limitBytes + 3))
  let length = pageEnd(bytes, Math.min(limitBytes, bytes.length))
  let text = bytes.subarray(0, length).toString('utf8')
  while (!fits(text)) {
    const shorter = pageEnd(bytes, Math.floor(length * 0.9))
    if (shorter >= length) break
    length = shorter
    text = bytes.subarray(0, length).toString('utf8')
  }
  return {text, offset: from, next_offset: from + length, size, eof: from + length >= size}
}

/**
 * The largest length <= `length` that does not cut a UTF-8 character of
 * `bytes`; at least the first character (or byte), so a page always advances.
 */
function pageEnd(bytes: Buffer, length: number): number {
  if (bytes.length === 0) return 0
  const end = Math.min(length, bytes.length)
  // The lead byte of the character the cut falls in (or right after).
  let lead = end
  while (lead > 0 && lead > end - 4 && (bytes[lead - 1] & 0xc0) === 0x80) lead--
  lead = Math.max(0, lead - 1)
  const width = characterWidth(bytes[lead])
  const cut = lead + width <= end ? end : lead
  return cut > 0 ? cut : Math.min(characterWidth(bytes[0]), bytes.length)
}

/** Bytes of the UTF-8 character starting with `byte` (1 for ASCII and stray continuation bytes). */
function characterWidth(byte: number): number {
  return byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1
}

/** How often the Run's executor says to re-read its files (undefined: file notifications reach us). */
function followPollMs(dir: string): number | undefined {
  try {
    const meta = readRunMetaRaw(dir)
    return meta ? askExecutor().pollMs(meta) : undefined
  } catch {
    return undefined
  }
}
