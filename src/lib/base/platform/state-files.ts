/**
 * Atomic, bounded reads and writes of the JSON and JSONL files that hold all
 * state. Writers go through temp + rename so a reader never sees half a file;
 * readers refuse anything corrupt, oversized or of a foreign schema instead of
 * guessing.
 */
import {randomHex} from './builtins.js'
import {
  closeSync,
  constants,
  existsSync,
  fstatSync,
  fsyncSync,
  openSync,
  readSync,
  renameSync,
  statSync,
  unlinkSync,
} from 'node:fs'
import {basename, dirname, join} from 'node:path'
import {corruptStateError, permissionDeniedError} from './errors.js'
import {appendStateFile, linkedPathError, openStateFile, writeWhole} from './private-files.js'

/** Largest JSON document we will parse (run.json, result.json, endpoints...). */
export const MAX_JSON_BYTES = 1024 * 1024

/** Write `data` as JSON to `file` atomically: temp file in the same dir, fsync (unless `durable: false`), rename. */
export function writeJsonAtomic(file: string, data: unknown, options: {durable?: boolean} = {}): void {
  let text: string
  try {
    text = JSON.stringify(data, null, 2) + '\n'
  } catch (error) {
    // A document read back from a state file nested deeper than the stack allows (a Run can write such a run.json).
    if (error instanceof RangeError) throw corruptStateError(file, 'holds a value nested too deeply to write back')
    throw error
  }
  writeFileAtomic(file, text, options)
}

/** Write a whole text file atomically (same-directory temp file, then rename). */
export function writeFileAtomic(file: string, text: string | Uint8Array, options: {durable?: boolean} = {}): void {
  const temp = join(dirname(file), `.${basename(file)}.${process.pid}.${randomHex(4)}.tmp`)
  // Mode 0600 whatever the umask; O_EXCL: never through a link planted under the temp name.
  const fd = openStateFile(temp, 'create')
  try {
    try {
      writeWhole(fd, text, file)
      // durable: false is for caches, which may be lost in a crash but never half-written.
      if (options.durable !== false) fsyncSync(fd)
    } finally {
      closeSync(fd)
    }
    // rename() replaces a link at `file` itself, never writes through it.
    renameOver(temp, file)
  } catch (error) {
    // A full disk (ENOSPC) or any other failure leaves no temporary file behind.
    unlinkQuietly(temp)
    throw error
  }
}

/** Where damage found at `file` is kept for a look: beside it, `<file>.damaged-<pid>-<ms>`. */
export function damagedName(file: string): string {
  return `${file}.damaged-${process.pid}-${Date.now()}`
}

/** Move what is at `file` out of the way, to damagedName (renamed: never followed, opened nor deleted); returns where. */
export function moveAside(file: string): string {
  const aside = damagedName(file)
  renameSync(file, aside)
  return aside
}

/**
 * rename(), and a directory someone made where the file goes (a Run can make
 * one in its state dir, or a neighbour's: a directory at `result.json` lost
 * the end) is moved aside (moveAside) and the rename done again. A file,
 * FIFO or link there is replaced by the rename itself.
 */
function renameOver(temp: string, file: string): void {
  try {
    renameSync(temp, file)
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code !== 'EISDIR' && code !== 'ENOTEMPTY' && code !== 'EEXIST') throw error
    moveAside(file)
    renameSync(temp, file)
  }
}

export interface ReadJsonOptions {
  /** Expected value of the document's `schema` field, when it has one. */
  schema?: string
  maxBytes?: number
  /**
   * The file is usually missing (a Run's usage.json, collected.json): ask
   * whether it exists first, which costs a quarter of a failed open and its
   * exception.
   */
  oftenMissing?: boolean
}

/**
 * Read a JSON document, or `undefined` when the file does not exist.
 * Corrupt, oversized, non-object or foreign-schema files throw an error naming the file.
 */
export function readJsonFile<T = Record<string, unknown>>(file: string, options: ReadJsonOptions = {}): T | undefined {
  if (options.oftenMissing && !existsSync(file)) return undefined
  const text = readBoundedText(file, options.maxBytes ?? MAX_JSON_BYTES)
  return text === undefined ? undefined : parseJsonDocument<T>(file, text, options.schema)
}

/**
 * Parse the text of the state file `file` as one JSON object, of `schema` when
 * given; anything else throws an error naming the file.
 */
export function parseJsonDocument<T = Record<string, unknown>>(file: string, text: string, schema?: string): T {
  let data: unknown
  try {
    data = JSON.parse(text)
  } catch {
    throw corruptStateError(file, 'is not valid JSON')
  }
  if (data === null || typeof data !== 'object' || Array.isArray(data)) {
    throw corruptStateError(file, 'is not a JSON object')
  }
  if (schema !== undefined && (data as {schema?: unknown}).schema !== schema) {
    throw corruptStateError(
      file,
      `has schema ${JSON.stringify((data as {schema?: unknown}).schema)}, expected "${schema}"`,
    )
  }
  return data as T
}

/**
 * Append one JSON line. A single write() of one short line to an O_APPEND
 * file is atomic on local file systems, so concurrent appenders never
 * interleave; callers that also rewrite the file (compaction) hold a lock.
 */
export function appendJsonLine(file: string, record: unknown): void {
  appendStateFile(file, JSON.stringify(record) + '\n')
}

export interface JsonLines<T> {
  records: T[]
  /** Lines that did not parse (a torn write after a crash, or tampering). */
  damaged: number
}

/**
 * Read a whole text file unless it is larger than `maxBytes` (then throw,
 * naming it); undefined when it does not exist. A hostile huge file is never
 * read (see readBoundedWith).
 */
export function readBoundedText(file: string, maxBytes: number): string | undefined {
  return readBoundedWith(file, maxBytes, decodeText)
}

/** readBoundedText()'s bytes, undecoded. */
export function readBoundedBytes(file: string, maxBytes: number): Buffer | undefined {
  return readBoundedWith(file, maxBytes, copyBytes)
}

const decodeText = (bytes: Buffer, start: number, end: number): string => bytes.toString('utf8', start, end)
// The reused buffer is copied out; a buffer of the file's own is handed over.
const copyBytes = (bytes: Buffer, start: number, end: number): Buffer =>
  bytes === scratch ? Buffer.from(bytes.subarray(start, end)) : bytes.subarray(start, end)

/**
 * Most state files are small, and a bulk reader (a `wait` reads a few hundred
 * run.json and traces) would otherwise pay an fstat per file: they are first
 * read into this reused buffer, and a read that comes back short of it was
 * the whole file (a regular file's read is short only at its end). Only a
 * file that fills it, or reads as empty, is fstat'ed: for its size, and so
 * that a FIFO, a device or a directory planted where a state file belongs is
 * named as such.
 */
const SMALL_FILE_BYTES = 64 * 1024
let scratch: Buffer | undefined

/**
 * Read `file` as readBoundedBytes() does, handing its bytes (`bytes[start,
 * end)`, valid only during the call) to `take`: a bulk reader that keeps
 * little of most files decides from the bytes without a copy.
 */
export function readBoundedWith<T>(
  file: string,
  maxBytes: number,
  take: (bytes: Buffer, start: number, end: number) => T,
): T | undefined {
  // The last maxBytes of a file allowed at most maxBytes are all of it.
  const read = readFileEnd(file, maxBytes, maxBytes)
  return read && take(read.bytes, 0, read.length)
}

/**
 * The last `length` bytes of `file` (all of it when it is shorter), and the
 * offset in the file where they start; undefined when it does not exist.
 * `bytes` is valid until the next read. A file that fits the reused buffer
 * and `length` costs no stat (see SMALL_FILE_BYTES). Fails closed, naming the
 * file: not a regular file, or larger than `maxBytes`.
 */
export function readFileEnd(
  file: string,
  length: number,
  maxBytes = Number.MAX_SAFE_INTEGER,
): {bytes: Buffer; start: number; length: number} | undefined {
  let fd: number
  try {
    fd = openForReading(file)
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'ENOENT') return undefined
    if (code === 'ELOOP') throw linkedPathError(file)
    if (code === 'EACCES') throw permissionDeniedError(file)
    throw corruptStateError(
      file,
      `cannot be read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`,
    )
  }
  try {
    scratch ??= Buffer.allocUnsafe(SMALL_FILE_BYTES)
    // One byte more than wanted: a read that comes back short of its request was the whole file.
    const request = Math.min(SMALL_FILE_BYTES, length + 1)
    let n: number
    try {
      n = readSync(fd, scratch, 0, request, 0)
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EISDIR')
        throw corruptStateError(file, 'is a directory, not a file')
      n = -1
    }
    if (n > 0 && n < request && n <= maxBytes) return {bytes: scratch, start: 0, length: n}
    const stat = fstatSync(fd)
    if (!stat.isFile())
      throw corruptStateError(file, stat.isDirectory() ? 'is a directory, not a file' : 'is not a regular file')
    const size = stat.size
    if (size > maxBytes) throw corruptStateError(file, `is ${size} bytes, over the ${maxBytes}-byte limit`)
    const start = Math.max(0, size - length)
    const buffer = Buffer.allocUnsafe(size - start)
    let read = 0
    while (read < buffer.length) {
      const got = readSync(fd, buffer, read, buffer.length - read, start + read)
      if (got === 0) break
      read += got
    }
    return {bytes: buffer, start, length: read}
  } finally {
    closeSync(fd)
  }
}

/**
 * O_NONBLOCK: a FIFO planted where a state file belongs must not hang the
 * reader. O_NOATIME (Linux): reading a state file leaves its access time
 * alone, where relatime would write the inode on the first read after each
 * change (a listing or a rebuild reads thousands); it is refused (EPERM) for
 * a file this user does not own, and then dropped for the rest of the process.
 * O_NOFOLLOW: a link planted where a state file belongs is named (ELOOP), not read.
 */
let readFlags = constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW | (constants.O_NOATIME ?? 0)

function openForReading(file: string): number {
  try {
    return openSync(file, readFlags)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EPERM' || !(readFlags & (constants.O_NOATIME ?? 0))) throw error
    readFlags &= ~constants.O_NOATIME
    return openSync(file, readFlags)
  }
}

/** Read a JSONL journal; missing file → empty. Lines that fail to parse are counted, not fatal. */
export function readJsonLines<T>(file: string, maxBytes = 16 * 1024 * 1024): JsonLines<T> {
  const text = readBoundedText(file, maxBytes)
  return text === undefined ? {records: [], damaged: 0} : parseJsonLines<T>(text)
}

/** The JSON object lines of `text` (blank lines skipped, others counted as damaged). */
export function parseJsonLines<T>(text: string): JsonLines<T> {
  const records: T[] = []
  let damaged = 0
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue
    try {
      const value = JSON.parse(line)
      if (value && typeof value === 'object') records.push(value as T)
      else damaged++
    } catch {
      damaged++
    }
  }
  return {records, damaged}
}

/** Size of a file in bytes, 0 when it does not exist. */
export function fileSize(file: string): number {
  try {
    return statSync(file).size
  } catch {
    return 0
  }
}

/** Whether `path` is a directory (a link to one counts); false when nothing is there. */
export function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory()
  } catch {
    return false
  }
}

/** Unlink `file` if it is there; whether it was (nothing else is said: a file already gone is the wanted state). */
export function unlinkQuietly(file: string): boolean {
  try {
    unlinkSync(file)
    return true
  } catch {
    return false
  }
}
