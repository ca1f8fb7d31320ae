/**
 * `actors logs RUN` without --follow (SPEC: Authority over files and Runs): the
 * log printed whole, at any size, bytes unchanged (no decoding, so bytes that
 * are not UTF-8 pass through as they are), through one fixed buffer: each
 * piece is handed to stdout and the next read waits until it was written, so
 * memory stays flat whatever the log's size and a reader that goes away ends
 * the copy at once.
 */
import {closeSync, constants, fstatSync, openSync, readSync} from 'node:fs'
import {StringDecoder} from 'node:string_decoder'
import {corruptStateError} from '../../base/platform/errors.js'
import {stdoutClosed, writeWhole} from './output-guard.js'

/** Bytes read and written at a time. */
const PIECE_BYTES = 1024 * 1024

/**
 * Open a log for reading: never through a symbolic link, never blocking on a
 * FIFO a Run put in its place (named as damage); undefined when it does not
 * exist (nothing written yet).
 */
function openLog(file: string): number | undefined {
  let fd: number
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK)
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'ENOENT') return undefined
    if (code === 'ELOOP') throw corruptStateError(file, 'is a symbolic link; actors never reads a log through one')
    throw corruptStateError(file, `cannot be read (${code ?? (error as Error).message})`)
  }
  const stat = fstatSync(fd)
  if (stat.isFile()) return fd
  closeSync(fd)
  throw corruptStateError(file, stat.isDirectory() ? 'is a directory, not a file' : 'is not a regular file')
}

/** Hand `bytes` to stdout; resolves once written (or refused), false when stdout is gone. */
function writePiece(bytes: Uint8Array): Promise<boolean> {
  return new Promise((resolve) => writeWhole(bytes, (error) => resolve(!error)))
}

/**
 * The byte offset where the last `lines` lines of the open file `fd` (of
 * `size` bytes) start, scanning back from the end one piece at a time.
 */
function lastLinesOffset(fd: number, size: number, lines: number, buffer: Buffer): number {
  if (lines <= 0) return size
  let newlines = 0
  let end = size
  // A final newline ends the last line; it does not start an empty one.
  let skipFinal = true
  while (end > 0) {
    const start = Math.max(0, end - buffer.length)
    const n = readSync(fd, buffer, 0, end - start, start)
    for (let i = n - 1; i >= 0; i--) {
      if (buffer[i] !== 10) {
        skipFinal = false
        continue
      }
      if (skipFinal) {
        skipFinal = false
        continue
      }
      if (++newlines === lines) return start + i + 1
    }
    end = start
  }
  return 0
}

/**
 * Copy the log `file` to stdout, from its start or from its last `tail`
 * lines, as it is when the copy starts (bytes appended meanwhile are left for
 * `--follow`). Resolves with the bytes written; stops early when stdout is gone.
 */
export async function copyLogToStdout(file: string, tail?: number): Promise<number> {
  const fd = openLog(file)
  if (fd === undefined) return 0
  try {
    const stat = fstatSync(fd)
    if (!stat.isFile())
      throw corruptStateError(file, stat.isDirectory() ? 'is a directory, not a file' : 'is not a regular file')
    const buffer = Buffer.allocUnsafe(PIECE_BYTES)
    let offset = tail === undefined ? 0 : lastLinesOffset(fd, stat.size, tail, buffer)
    const from = offset
    while (offset < stat.size && !stdoutClosed().aborted) {
      const n = readSync(fd, buffer, 0, Math.min(buffer.length, stat.size - offset), offset)
      if (n <= 0) break
      // The buffer is read into again only once this piece was written: writeWhole may hand it to a stream.
      if (!(await writePiece(buffer.subarray(0, n)))) break
      offset += n
    }
    return offset - from
  } finally {
    closeSync(fd)
  }
}

/**
 * Write bytes [`from`, end) of the log `file` to stdout as the inside of a
 * JSON string (escaped, no quotes), one piece at a time, decoded as UTF-8
 * as the whole would be (a character cut between pieces is carried over):
 * `logs --json` of a huge log in bounded memory, where building the document
 * took a string six times the log's end (`\u0000` for each byte of a sparse
 * log). `head` (the document up to the string) is written once the log is
 * open: a log refused (a link, a FIFO) leaves stdout empty for the error
 * document, never half a document before it. Resolves false when stdout
 * went away.
 */
export async function copyLogAsJsonString(file: string, from: number, head: string): Promise<boolean> {
  const fd = openLog(file)
  if (!(await writePiece(Buffer.from(head)))) {
    if (fd !== undefined) closeSync(fd)
    return false
  }
  if (fd === undefined) return true
  try {
    const size = fstatSync(fd).size
    const buffer = Buffer.allocUnsafe(PIECE_BYTES)
    const decoder = new StringDecoder('utf8')
    for (let offset = from; offset < size; ) {
      const n = readSync(fd, buffer, 0, Math.min(buffer.length, size - offset), offset)
      if (n <= 0) break
      offset += n
      if (!(await writeJsonPiece(decoder.write(buffer.subarray(0, n))))) return false
    }
    return writeJsonPiece(decoder.end())
  } finally {
    closeSync(fd)
  }
}

/** `text` escaped as inside a JSON string, to stdout. */
function writeJsonPiece(text: string): Promise<boolean> {
  return text === '' ? Promise.resolve(true) : writePiece(Buffer.from(JSON.stringify(text).slice(1, -1)))
}
