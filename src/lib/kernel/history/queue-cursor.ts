/**
 * The cursor of an owner's queue (index/queue/.<tag>.cursor): the queue's
 * marker names in delivery order, written once by a wait that listed the
 * queue, then read forward a chunk at a time (QueueCursor) by later waits,
 * which keep their place in `.cursor-at`. A queue whose markers changed
 * behind the cursor (its `.changed` flag, index-queue.ts) is listed again.
 */
import {closeSync, constants, existsSync, ftruncateSync, openSync, readSync, writeSync} from 'node:fs'
import {randomHex} from '../../base/platform/builtins.js'
import {openStateFile} from '../../base/platform/private-files.js'
import {readJsonFile, unlinkQuietly, writeFileAtomic} from '../../base/platform/state-files.js'
import {CHANGED_FILE, CURSOR_FILE, queueStateFile, tagValue} from './index-queue.js'

const CURSOR_SCHEMA = 'actors-queue-cursor-v1'
/** A queue shorter than this (two batches) is listed each time: no cursor is written. */
const MIN_CURSOR_ENTRIES = 512
/** About 350,000 entries: a larger backlog is listed each time rather than cached. */
const MAX_CURSOR_BYTES = 32 * 1024 * 1024

/** What a cursor line holds: `<flag><root tag><name>`, flag `+` when another line of the cursor has the same root tag, else `=`. */
export interface CursorLine {
  name: string
  /** The root tag (8 hex digits) as a number. */
  root: number
  /** Another line of the cursor has this root tag (a tree with several queued Runs). */
  shared: boolean
  /** Where the line starts in the cursor file (what the read position records). */
  offset: number
}

/** Where the owner's next wait starts reading its cursor (`.cursor-at`, rewritten after each claim). */
interface CursorPosition {
  /** The cursor this is a position in (its header's id). */
  id: string
  /** Every line before this byte offset was delivered or dropped. */
  offset: number
  /** How many lines that is, plus those in `skip` (for the count of what is left). */
  consumed: number
  /** Offsets of lines after `offset` delivered or dropped already (trees taken out of order). */
  skip: number[]
}

export const POSITION_FILE = '.cursor-at'
/**
 * Read at a time: about 350 lines, more than one batch's window (272), so a drain's wait reads one chunk.
 * Every line read becomes a string and an object in a process that lives a fraction of a second: a bigger
 * chunk costs decoding lines no batch uses.
 */
const CHUNK_BYTES = 32 * 1024
/** A position that skips more lines than this is not kept: the next wait lists the queue. */
const MAX_SKIPPED = 4096
/** `<flag><root tag: 8>~<ended>~<owner: 8>~<root: 8>~<run>@<instance>`: a name is at most a few hundred bytes. */
const MAX_LINE_BYTES = 4096
let chunk: Buffer | undefined

/**
 * The owner's queue as its cursor holds it, read a chunk at a time from
 * where the last wait left off: a wait over a backlog of 20,000 reads the
 * few hundred lines it needs, not the whole list (memory this process has
 * not touched yet is what costs).
 */
export class QueueCursor {
  private position: number
  private readonly skip: Set<number>
  /** No more lines: the end of the file, or damage. */
  ended = false

  private constructor(
    private readonly file: string,
    private readonly positionFile: string,
    private readonly header: {id: string; count: number},
    private readonly at: CursorPosition,
  ) {
    this.position = at.offset
    this.skip = new Set(at.skip)
  }

  /**
   * The cursor of the queue of `ownerTag`, for a wait holding the owner's
   * journal lock; undefined when there is none to trust (none written,
   * damaged, or the queue changed since: then it is removed, and the caller
   * lists the queue and writes a fresh one).
   */
  static open(home: string, ownerTag: string): QueueCursor | undefined {
    const file = queueStateFile(home, ownerTag, CURSOR_FILE)
    const positionFile = queueStateFile(home, ownerTag, POSITION_FILE)
    if (existsSync(queueStateFile(home, ownerTag, CHANGED_FILE))) {
      // The cursor first: a wait killed between the two leaves nothing stale to trust.
      unlinkQuietly(file)
      unlinkQuietly(queueStateFile(home, ownerTag, CHANGED_FILE))
      return undefined
    }
    try {
      const head = readChunk(file, 0, 1024)
      const end = head.indexOf(10)
      if (end === -1) return undefined
      const header = JSON.parse(head.toString('latin1', 0, end)) as {
        schema?: unknown
        owner?: unknown
        id?: unknown
        count?: unknown
      }
      if (
        header.schema !== CURSOR_SCHEMA ||
        header.owner !== ownerTag ||
        typeof header.id !== 'string' ||
        !Number.isSafeInteger(header.count)
      )
        return undefined
      const at = readJsonFile<CursorPosition>(positionFile, {maxBytes: 256 * 1024})
      if (
        !at ||
        at.id !== header.id ||
        !Number.isSafeInteger(at.offset) ||
        at.offset <= end ||
        !Number.isSafeInteger(at.consumed) ||
        !Array.isArray(at.skip) ||
        !at.skip.every(Number.isSafeInteger)
      )
        return undefined
      return new QueueCursor(file, positionFile, {id: header.id, count: header.count as number}, at)
    } catch {
      // Missing or unreadable: none to trust.
      return undefined
    }
  }

  /** Lines not delivered nor dropped, as of the position this cursor was opened at (an estimate: some may have been since). */
  get left(): number {
    return Math.max(0, this.header.count - this.at.consumed)
  }

  /**
   * The next lines (up to a chunk's worth) not delivered nor dropped, in
   * order; none once the cursor has ended. Damage (a line not shaped as
   * written, one that does not fit a chunk) ends it early: the reader then
   * lists the queue.
   */
  read(): CursorLine[] {
    const lines: CursorLine[] = []
    if (this.ended) return lines
    let bytes: Buffer
    try {
      bytes = readChunk(this.file, this.position, CHUNK_BYTES)
    } catch {
      this.ended = true
      return lines
    }
    let at = 0
    for (let end = bytes.indexOf(10); end !== -1; end = bytes.indexOf(10, at)) {
      const root =
        end - at > 10 && (bytes[at] === 61 || bytes[at] === 43) && bytes[at + 9] === 126 ? tagValue(bytes, at + 1) : -1
      if (root === -1) {
        this.ended = true
        return lines
      }
      const offset = this.position + at
      if (!this.skip.has(offset))
        lines.push({name: bytes.toString('latin1', at + 9, end), root, shared: bytes[at] === 43, offset})
      at = end + 1
    }
    // Nothing whole was read: the end of the file (or a line longer than a chunk, which is damage).
    if (at === 0) this.ended = true
    this.position += at
    return lines
  }

  /**
   * Record where the owner's next wait starts reading: past every line of
   * `lines` (those this reader read) that `consumed` says was delivered or
   * dropped, and before the first one that was not.
   */
  keep(lines: CursorLine[], consumed: (line: CursorLine) => boolean): void {
    let offset = this.position
    const taken: number[] = []
    for (const line of lines) {
      if (consumed(line)) taken.push(line.offset)
      else offset = Math.min(offset, line.offset)
    }
    const skip = [...this.at.skip, ...taken].filter((o) => o >= offset)
    if (skip.length > MAX_SKIPPED) {
      unlinkQuietly(this.file)
      return
    }
    const at: CursorPosition = {id: this.header.id, offset, consumed: this.at.consumed + taken.length, skip}
    try {
      writePosition(this.positionFile, JSON.stringify(at) + '\n')
    } catch {
      unlinkQuietly(this.file)
    }
  }
}

/**
 * Write a cursor's position (`text`, ASCII). A position that fits in a page
 * is written over the old one in place, then cut to its length: a write of
 * one page is never torn by a signal, and a process killed before the cut
 * leaves the old text's tail after the new one, which does not parse (its
 * last bytes are `}` and a newline): no position, so the next wait lists. A
 * rename over the old file would be atomic too, but ext4 writes the new file
 * out before such a rename returns: 1 to 20 ms on a busy disk, once per wait.
 * A longer position (many lines taken out of order) is replaced by rename.
 */
function writePosition(file: string, text: string): void {
  let fd: number | undefined
  try {
    // Not through a link planted in its place.
    if (text.length <= POSITION_IN_PLACE_BYTES) fd = openStateFile(file, 'update')
  } catch {}
  if (fd === undefined) {
    writeFileAtomic(file, text, {durable: false})
    return
  }
  try {
    writeSync(fd, text, 0, 'latin1')
    ftruncateSync(fd, text.length)
  } finally {
    closeSync(fd)
  }
}
const POSITION_IN_PLACE_BYTES = 4096

/** Up to `length` bytes of `file` from `position`, in a buffer reused by the next call. */
function readChunk(file: string, position: number, length: number): Buffer {
  chunk ??= Buffer.allocUnsafe(CHUNK_BYTES)
  const fd = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW)
  try {
    return chunk.subarray(0, readSync(fd, chunk, 0, Math.min(length, CHUNK_BYTES), position))
  } finally {
    closeSync(fd)
  }
}

/**
 * Write a fresh cursor of the queue of `ownerTag`: `names`, in batch order,
 * with `root` giving each one's root tag (a wait holding the owner's journal
 * lock, after listing the queue).
 */
export function writeQueueCursor(
  home: string,
  ownerTag: string,
  names: string[],
  root: (name: string) => number,
): void {
  const cursorFile = queueStateFile(home, ownerTag, CURSOR_FILE)
  // A short queue is listed as cheaply as a cursor is read (and a busy one is listed again soon anyway).
  if (names.length < MIN_CURSOR_ENTRIES) {
    unlinkQuietly(cursorFile)
    return
  }
  const roots = new Float64Array(names.length)
  const seen = new Map<number, number>()
  const id = randomHex(8)
  const header = JSON.stringify({schema: CURSOR_SCHEMA, owner: ownerTag, id, count: names.length}) + '\n'
  let size = header.length
  for (let i = 0; i < names.length; i++) {
    roots[i] = root(names[i])
    seen.set(roots[i], (seen.get(roots[i]) ?? 0) + 1)
    // A line: flag, root tag (8), name (plain ASCII, as every marker name), newline.
    const line = names[i].length + 10
    if (line > MAX_LINE_BYTES) size = MAX_CURSOR_BYTES
    size += line
  }
  if (size >= MAX_CURSOR_BYTES) {
    unlinkQuietly(cursorFile)
    return
  }
  // Written straight into one buffer of its size: a drain's first wait writes 20,000 lines, and a string per line,
  // their join and its encoding cost three times the memory (which this VM charges for by the page).
  const bytes = Buffer.allocUnsafe(size)
  let at = bytes.write(header, 0, 'latin1')
  for (let i = 0; i < names.length; i++) {
    bytes[at] = seen.get(roots[i])! > 1 ? 43 : 61
    at += bytes.write(roots[i].toString(16).padStart(8, '0'), at + 1, 'latin1') + 1
    at += bytes.write(names[i], at, 'latin1')
    bytes[at++] = 10
  }
  try {
    // Caches: lost in a crash, never half-written. The position names the cursor's id: a crash between the two
    // writes leaves a position of another cursor, which is not used.
    writeFileAtomic(cursorFile, bytes.subarray(0, at), {durable: false})
    writePosition(
      queueStateFile(home, ownerTag, POSITION_FILE),
      JSON.stringify({id, offset: header.length, consumed: 0, skip: []}) + '\n',
    )
  } catch {
    // No queue directory (nothing was ever queued), or no room: the next wait lists.
    unlinkQuietly(cursorFile)
  }
}
