/**
 * Removing a directory tree with as few system calls as the tree allows:
 * one listing per directory (its entries' types come with it), one unlink
 * per file, one rmdir per directory. fs.rmSync's recursive removal (Node 20)
 * first tries rmdir, then lstats every entry before removing it: about
 * twice the calls, which is most of what `actors prune` costs per Run.
 */
import {lstatSync, readdirSync, rmdirSync, rmSync, unlinkSync} from 'node:fs'
import {sep} from 'node:path'

/** Remove `dir` and everything under it (symbolic links are removed, never followed); nothing there is fine. */
export function removeTree(dir: string): void {
  try {
    // A link where the tree was: the link alone goes, never what it points at.
    if (lstatSync(dir).isSymbolicLink()) {
      unlinkSync(dir)
      return
    }
    removeEntries(dir)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return
    // Anything unusual (an entry that changed under us, a permission): the general way, which says what failed.
    rmSync(dir, {recursive: true, force: true})
  }
}

function removeEntries(dir: string): void {
  for (const entry of readdirSync(dir, {withFileTypes: true})) {
    const path = dir + sep + entry.name
    // Files, symbolic links, sockets and fifos alike are unlinked (Node lstats an entry whose type the listing lacks).
    if (entry.isDirectory()) removeEntries(path)
    else unlinkSync(path)
  }
  rmdirSync(dir)
}
