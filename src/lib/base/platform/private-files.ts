/**
 * How the kernel creates, opens and removes paths inside its state root:
 * privately (dirs 0700, files and sockets 0600, whatever the umask: logs,
 * argv, values and env are in there) and never through a symbolic link (a
 * link where a state dir or file belongs is damage, named, exit 1: nothing
 * is read, appended, written or removed through it). Every writer of the
 * root goes through these few calls rather than node:fs directly.
 */
import {chmodSync, closeSync, constants, fstatSync, lstatSync, mkdirSync, openSync, writeSync} from 'node:fs'
import {dirname} from 'node:path'
import {ActorsError, corruptStateError, EXIT} from './errors.js'

/** Modes of everything the kernel creates in the state root. */
export const PRIVATE_DIR_MODE = 0o700
export const PRIVATE_FILE_MODE = 0o600
/** Open a file as a place to fstat, name and connect through, not to read (Linux; not among Node's fs.constants). */
export const O_PATH = 0o10000000

/** A link found where the state root holds a dir or file of its own: damage, exit 1, never followed. */
export class LinkedPathError extends ActorsError {
  constructor(readonly path: string) {
    super(
      `${path} is a symbolic link; actors never follows links inside its state root`,
      EXIT.failed,
      `remove the link (rm ${JSON.stringify(path)}); nothing was read or changed through it`,
    )
  }
}

/** The error for a link at `path` (see LinkedPathError). */
export function linkedPathError(path: string): LinkedPathError {
  return new LinkedPathError(path)
}

/**
 * Create `dir` (and missing parents) with mode 0700. mkdir's mode is masked
 * by the umask, which can only take bits away: 0700 is never widened.
 */
export function makePrivateDir(dir: string): void {
  // Usually there already: one lstat says so, and names a link (refused: mkdir -p would go through it),
  // where mkdir -p would take a mkdir, a stat and then an lstat of its own.
  const there = lstatSync(dir, {throwIfNoEntry: false})
  if (there?.isDirectory()) return
  if (there?.isSymbolicLink()) throw linkedPathError(dir)
  makeDirAndParents(dir)
}

/**
 * mkdir -p, one level at a time. Node's own recursive mkdir retries without
 * end where mkdir says ENOENT under a parent that exists (`/proc/runs`):
 * here a second ENOENT is thrown. A file in the way fails with mkdir's EEXIST.
 */
function makeDirAndParents(dir: string): void {
  try {
    mkdirSync(dir, {mode: PRIVATE_DIR_MODE})
    return
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'EEXIST') {
      refuseFileInTheWay(dir, error)
      return
    }
    if (code !== 'ENOENT' || dirname(dir) === dir) throw error
  }
  makeDirAndParents(dirname(dir))
  try {
    mkdirSync(dir, {mode: PRIVATE_DIR_MODE})
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
    refuseFileInTheWay(dir, error)
  }
}

/** `dir` was there when mkdir tried (made meanwhile): fine when a dir, a link refused, mkdir's error for anything else. */
function refuseFileInTheWay(dir: string, error: unknown): void {
  refuseLinkedDir(dir)
  if (!lstatSync(dir).isDirectory()) throw error
}

/** Create exactly `dir` (fails with EEXIST when it is there: an atomic claim), mode 0700. */
export function claimPrivateDir(dir: string): void {
  mkdirSync(dir, {mode: PRIVATE_DIR_MODE})
}

const OPEN_FLAGS = {
  /** Append, creating the file when missing. */
  append: constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT,
  /** Replace the content, creating the file when missing. */
  write: constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC,
  /** Create a new file; EEXIST when one is there (O_EXCL never follows a link either). */
  create: constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL,
  /** Open for writing in place, creating when missing. */
  update: constants.O_WRONLY | constants.O_CREAT,
} as const

export type StateOpenMode = keyof typeof OPEN_FLAGS

/**
 * Open a state file for writing with O_NOFOLLOW and mode 0600: a link in
 * its place fails (ELOOP), and is named as damage instead of being written
 * through. O_NONBLOCK and the fstat after it: a FIFO (or device) planted by
 * a Run where a state file belongs is named as damage too, where a plain
 * open would block until someone reads it (a `control kill` that never
 * returned). So is a hard link: a Run that made its trace or inbox a second
 * name of a file elsewhere (a sibling's inbox, a file outside the state
 * root) had the kernel append the user's messages and records there. Other
 * errors are thrown as they are.
 */
export function openStateFile(file: string, how: StateOpenMode): number {
  let fd: number
  try {
    fd = openSync(file, OPEN_FLAGS[how] | constants.O_NOFOLLOW | constants.O_NONBLOCK, PRIVATE_FILE_MODE)
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'ELOOP') throw linkedPathError(file)
    // ENXIO: a FIFO with no reader, refused at once by O_NONBLOCK.
    if (code === 'ENXIO') throw corruptStateError(file, 'is not a regular file')
    throw error
  }
  const stat = fstatSync(fd)
  if (!stat.isFile() || stat.nlink > 1) {
    closeSync(fd)
    throw corruptStateError(
      file,
      stat.isFile() ? 'is a second name of another file (a hard link)' : 'is not a regular file',
    )
  }
  return fd
}

/** Write `text` to a state file opened as `how` (openStateFile), in one write. */
export function writeStateFile(file: string, text: string | Uint8Array, how: StateOpenMode = 'write'): void {
  const fd = openStateFile(file, how)
  try {
    writeWhole(fd, text, file)
  } finally {
    closeSync(fd)
  }
}

/**
 * Write all of `text` to `fd` in one write(), or throw EFBIG naming `file`: a short write (a file size limit
 * another process of the user set on this one with `prlimit --fsize`, red-team 17 N17-46) would otherwise leave
 * a state file cut short, and an atomic write would rename it into place as if whole.
 */
export function writeWhole(fd: number, text: string | Uint8Array, file: string): void {
  const bytes = typeof text === 'string' ? Buffer.from(text) : text
  const written = writeSync(fd, bytes)
  if (written !== bytes.length)
    throw Object.assign(new Error(`EFBIG: ${file}: ${written} of ${bytes.length} bytes written (a file size limit?)`), {
      code: 'EFBIG',
    })
}

/**
 * Append `text` to a state file (log, journal, inbox, trace) in one write():
 * O_APPEND keeps concurrent appenders of short lines from interleaving;
 * O_NOFOLLOW refuses a link planted in its place.
 */
export function appendStateFile(file: string, text: string | Uint8Array): void {
  writeStateFile(file, text, 'append')
}

/** Whether `path` is a directory itself, not a link to one (nor missing). */
export function isPlainDir(path: string): boolean {
  try {
    return lstatSync(path).isDirectory()
  } catch {
    return false
  }
}

/**
 * Refuse a state dir (or any dir of the root) that is a symbolic link;
 * nothing when it is missing. Callers check before they read, write or
 * remove anything below it: O_NOFOLLOW guards only a path's last part.
 */
export function refuseLinkedDir(dir: string): void {
  let link: boolean
  try {
    link = lstatSync(dir).isSymbolicLink()
  } catch {
    return
  }
  if (link) throw linkedPathError(dir)
}

/** Make a socket the kernel listens on private (0600): listen() creates it under the umask. */
export function makeSocketPrivate(path: string): void {
  chmodSync(path, PRIVATE_FILE_MODE)
}
