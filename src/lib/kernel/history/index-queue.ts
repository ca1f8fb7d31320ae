/**
 * The delivery queue of the run index (live-index.ts): a directory per owner,
 * `index/queue/<owner tag>/`, holding one queued marker per finished,
 * unreported Run instance of that owner. Kept apart from the live markers so
 * that commands about what is live never list the backlog, and per owner so
 * that one owner's wait never lists another's.
 *
 * A wait over a large backlog would still list its owner's whole queue to
 * pick the oldest 256. The cursor (queue-cursor.ts) keeps that listing for the owner's next
 * waits (its files live beside the queue directory, queueStateFile, so the
 * directory holds markers alone and can be renewed once empty: queue-renew.ts):
 * `.cursor`, the queue in batch order as a wait listed it (one line
 * per marker: a flag saying whether another line shares its tree, its tree
 * tag, its name), and `.cursor-at`, where the next wait starts reading (past
 * what was delivered). A wait reads a chunk from there, not the list: draining
 * 20,000 Runs lists the queue once, and each wait touches a few hundred lines.
 * It is a cache of the directory, trusted only this far:
 *
 * - Only a wait writes it, under its owner's delivery journal lock: a fresh
 *   cursor after listing the queue, or a new position past the batch it
 *   claimed (whose markers go once it is delivered). The position names its
 *   cursor: one of another cursor is not used.
 * - Whoever adds a marker to a queue then raises that queue's `.changed`
 *   flag. A wait that finds the flag drops the cursor, then the flag, then
 *   lists the queue afresh: a marker added after that listing raises the flag
 *   again, and a wait killed midway leaves no cursor to trust.
 * - An entry is read from its state dir before it is used, so one whose
 *   marker others removed meanwhile (settled, pruned) costs a read, no more,
 *   and a forged line delivers nothing that is not an unreported Run.
 * - The end of the cursor never means "nothing queued": the queue is listed.
 *   So a marker whose flag was lost (its writer killed between the two
 *   steps) is still delivered, at the latest once the backlog before it is.
 * - Damage (a line not as written, a position that does not fit) is a miss.
 */
import {makePrivateDir, openStateFile, refuseLinkedDir} from '../../base/platform/private-files.js'
import {closeSync, readdirSync, renameSync} from 'node:fs'
import {makeMarkerFile} from '../runs/index-entry.js'
import {sep} from 'node:path'
import {indexDir} from '../../base/platform/home.js'

const QUEUE_DIR = 'queue'
export const CURSOR_FILE = '.cursor'
export const CHANGED_FILE = '.changed'
/**
 * `index/queue`, refused (exit 1, named with the fix) when a link is in its
 * place: any Run can put one there, and the queue dirs, markers and flags
 * made under it would be made wherever it points. Every path under the queue
 * is had through here, so nothing is listed, written or removed through it.
 */
export function queueRootDir(home: string): string {
  const dir = indexDir(home) + sep + QUEUE_DIR
  refuseLinkedDir(dir)
  return dir
}

/** Where the queue of the owner tagged `ownerTag` (markerTag of the owner) lives. */
export function ownerQueueDir(home: string, ownerTag: string): string {
  return queueRootDir(home) + sep + ownerTag
}

/** Where a file about the queue of `ownerTag` lives (`.cursor`, `.cursor-at`, `.changed`): `index/queue/.<tag><name>`, beside its directory. */
export function queueStateFile(home: string, ownerTag: string, name: string): string {
  return queueRootDir(home) + sep + '.' + ownerTag + name
}

/** The owner tags that have a queue directory. */
export function queueOwnerTags(home: string): string[] {
  const root = queueRootDir(home)
  try {
    return readdirSync(root).filter((name) => name.length === 8 && tagValue(name, 0) !== -1)
  } catch {
    return []
  }
}

/** The names in the queue of `ownerTag` (markers, and the dot-files beside them). */
export function listOwnerQueue(home: string, ownerTag: string): string[] {
  try {
    return readdirSync(ownerQueueDir(home, ownerTag))
  } catch {
    return []
  }
}

/**
 * Put the queued marker `name` (owned by `ownerTag`) into its queue: moved
 * there from `from` (one atomic rename: the entry is under one name or the
 * other, never neither), or made. Then raise the queue's changed flag (see
 * the module comment), unless `flag` is false: a caller entering many (an
 * index rebuild) raises each queue's flag once, after the last
 * (markQueueChanged). Returns false when `from` was gone (another reader
 * moved or dropped it first).
 */
export function enqueueMarker(home: string, ownerTag: string, name: string, from?: string, flag = true): boolean {
  const dir = ownerQueueDir(home, ownerTag)
  const target = dir + sep + name
  const place = () => {
    if (from !== undefined) renameSync(from, target)
    else makeMarkerFile(home, target)
  }
  try {
    place()
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
    // The queue directory is made on first use (or the source is gone: then the retry says so).
    makePrivateDir(dir)
    try {
      place()
    } catch (again) {
      if ((again as NodeJS.ErrnoException).code === 'ENOENT') return false
      throw again
    }
  }
  if (flag) raiseChanged(home, ownerTag)
  return true
}

export function raiseChanged(home: string, ownerTag: string): void {
  try {
    closeSync(openStateFile(queueStateFile(home, ownerTag, CHANGED_FILE), 'append'))
  } catch {}
}

/**
 * A tag's 8 lowercase hex digits (a markerTag, at `from` in a name or in a
 * cursor's bytes) as a number; -1 when they are not that.
 */
export function tagValue(text: string | Uint8Array, from: number): number {
  let value = 0
  for (let i = from; i < from + 8; i++) {
    const c = typeof text === 'string' ? text.charCodeAt(i) : text[i]
    const digit = c >= 48 && c <= 57 ? c - 48 : c >= 97 && c <= 102 ? c - 87 : -1
    if (digit < 0) return -1
    value = value * 16 + digit
  }
  return value
}

/** Mark the queue of `ownerTag` changed (its cursor is not trusted again until a wait lists it): markers entered without their flag, a claimed batch withdrawn. */
export function markQueueChanged(home: string, ownerTag: string): void {
  raiseChanged(home, ownerTag)
}
