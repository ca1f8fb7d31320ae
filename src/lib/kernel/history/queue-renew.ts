/**
 * Bookkeeping that shrinks: a directory on ext4 never gives back the blocks
 * its entries once took, so an owner's queue directory that held 20,000
 * markers (a backlog) stays about 2.7 MB after the last one is delivered, and
 * every later listing of it reads those blocks. Once such a directory has
 * emptied, a fresh empty one is renamed over it: rename(2) replaces an empty
 * directory atomically and refuses (ENOTEMPTY) one that is not, so a marker
 * moved in at the same moment is never lost: it lands in the old directory
 * (then the rename fails and the directory stays) or in the new one.
 *
 * Only a directory that grew is renewed (its size says so without listing
 * it), under the run index's lock, by the wait that delivered its last
 * markers. The directory holds markers alone (index-queue.ts keeps the cursor
 * files beside it); an earlier version kept them inside, and such leftovers
 * are removed first.
 */
import {readdirSync, renameSync, rmdirSync} from 'node:fs'
import {join, sep} from 'node:path'
import {randomHex} from '../../base/platform/builtins.js'
import {claimPrivateDir} from '../../base/platform/private-files.js'
import {fileSize, unlinkQuietly} from '../../base/platform/state-files.js'
import {CHANGED_FILE, CURSOR_FILE, ownerQueueDir, queueOwnerTags, queueRootDir} from './index-queue.js'
import {POSITION_FILE} from './queue-cursor.js'
import {withIndexLock} from './live-index.js'

/** A queue directory larger than this (a fresh one is 4 KiB: a few hundred names) is renewed once empty. */
export const RENEW_ABOVE_BYTES = 16 * 1024
/** What an earlier version kept inside a queue directory: removed before the directory is renewed. */
const LEFTOVERS = new Set([CURSOR_FILE, POSITION_FILE, CHANGED_FILE])

/**
 * Replace every queue directory that grew and has emptied with a fresh one
 * (see the module comment). Returns the owner tags renewed. Never throws:
 * a directory not renewed now is renewed by a later wait.
 */
export function renewEmptiedQueues(home: string, ownerTags: string[] = queueOwnerTags(home)): string[] {
  const renewed: string[] = []
  for (const tag of ownerTags) {
    const dir = ownerQueueDir(home, tag)
    // Only a directory that grew past what a fresh one takes (one stat, no listing).
    if (fileSize(dir) <= RENEW_ABOVE_BYTES) continue
    try {
      if (withIndexLock(home, () => renewIfEmpty(home, dir))) renewed.push(tag)
    } catch {}
  }
  return renewed
}

/** Under the index lock: rename a fresh empty directory over `dir` if it holds no marker. */
function renewIfEmpty(home: string, dir: string): boolean {
  const names = readdirSync(dir)
  if (names.some((name) => !LEFTOVERS.has(name))) return false
  for (const name of names) unlinkQuietly(dir + sep + name)
  const fresh = join(queueRootDir(home), `.fresh-${randomHex(6)}`)
  // 0700 whatever the umask, as every dir of the state root.
  claimPrivateDir(fresh)
  try {
    renameSync(fresh, dir)
    return true
  } catch (error) {
    rmdirSync(fresh)
    // A marker came in meanwhile: the directory is in use again, and stays.
    if (['ENOTEMPTY', 'EEXIST'].includes((error as NodeJS.ErrnoException).code ?? '')) return false
    throw error
  }
}
