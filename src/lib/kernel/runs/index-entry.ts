/**
 * A Run's entry in the run index (history/live-index.ts describes the
 * index): the live marker `index/<run>@<instance>`, an empty file. It is made
 * together with the Run's first run.json (store.ts writeNewRunLocked), the
 * entry first, so live commands find a Run from before it can end. The index
 * itself (its readers, the delivery queue, the rebuild) is the history
 * layer's; this is only the part a new Run's files need.
 */
import {closeSync, linkSync} from 'node:fs'
import {join, sep} from 'node:path'
import {indexDir} from '../../base/platform/home.js'
import {makePrivateDir, openStateFile} from '../../base/platform/private-files.js'

/** The empty file markers are hard links to. */
const PROTO_FILE = '.marker'

/** Where the live marker of a Run instance is. */
export function liveMarkerFile(home: string, id: string, instance: string): string {
  return indexDir(home) + sep + id + '@' + instance
}

/** Enter a Run instance in the index as live (idempotent). */
export function addIndexMarker(home: string, id: string, instance: string): void {
  const file = liveMarkerFile(home, id, instance)
  try {
    makeMarkerFile(home, file)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
    makePrivateDir(indexDir(home))
    makeMarkerFile(home, file)
  }
}

/**
 * Keep a Run that is about to record its end in the index (its live marker
 * made again if gone), so the end reaches its owner's plain `wait`: a marker
 * is a file of the state root, which any Run may delete, and readers queue
 * an end only from its marker. Before the end is written, so no reader has
 * settled the instance yet. Best effort: a missing or linked index is a
 * rebuild's to mend (a link is never written through: makePrivateDir
 * refuses it), not an end's to fail on.
 */
export function keepIndexed(home: string, id: string, instance: string): void {
  try {
    makePrivateDir(indexDir(home))
    addIndexMarker(home, id, instance)
  } catch {}
}

/**
 * Create the empty marker `file` (live or queued): a hard link to
 * index/.marker when it can (a directory entry only: a rebuild enters
 * thousands), else a new empty file (no .marker yet, a file system without
 * hard links, or the link-count limit reached). ENOENT: no such directory.
 */
export function makeMarkerFile(home: string, file: string): void {
  const proto = join(indexDir(home), PROTO_FILE)
  try {
    linkSync(proto, file)
    return
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return
  }
  // ENOENT here: no queue directory yet (the caller makes it).
  closeSync(openStateFile(file, 'append'))
  try {
    linkSync(file, proto)
  } catch {}
}
