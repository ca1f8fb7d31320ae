/**
 * Which entries of a state root's runs/ are Runs: a directory under a name a
 * Run id can have. Anything else there (a link, a file, a socket, a
 * directory named as no Run id can be) is damage, named, never read through.
 */
import {readdirSync, statfsSync, statSync, type Dirent} from 'node:fs'
import {sep} from 'node:path'
import {corruptStateError} from '../../base/platform/errors.js'
import {isPlainName, refuseLinkedRuns, runsDir} from '../../base/platform/home.js'
import {linkedPathError} from '../../base/platform/private-files.js'

/** One listing of runs/ (dot-names left out): its state dirs, and the entries that cannot be one. */
export interface RunEntries {
  /** Ids of the entries that are directories (unsorted). */
  ids: string[]
  /** Entries that are no directory, each with why it is damage: a symbolic link (never followed), a file, a socket. */
  strays: Array<{dir: string; error: string}>
}

/** A name's first character that leaves it out of listings (`.`: runs/.cache is no Run). */
const DOT = 46

/**
 * List runs/: a state dir is a directory, and an entry that is a link or
 * anything else is named as damage, never read through. Without a system
 * call per entry, and mostly without a type per entry either (see
 * namesOfDirsOnly): a listing with types makes an object per entry, which a
 * listing of thousands of Runs pays for in time and garbage.
 */
export function listRunEntries(home: string): RunEntries {
  // runs/ itself a link: refused, never listed through (what is there is no Run of this root).
  refuseLinkedRuns(home)
  const base = runsDir(home)
  const found: RunEntries = {ids: [], strays: []}
  let entries: Dirent[]
  try {
    const names = namesOfDirsOnly(base)
    if (names) {
      for (const name of names) if (name.charCodeAt(0) !== DOT) addRunDir(found, base, name)
      return found
    }
    entries = readdirSync(base, {withFileTypes: true})
  } catch {
    return found
  }
  for (const entry of entries) {
    const name = entry.name
    if (name.charCodeAt(0) === DOT) continue
    if (entry.isDirectory()) addRunDir(found, base, name)
    else found.strays.push({dir: base + sep + name, error: strayProblem(base + sep + name, entry)})
  }
  return found
}

/**
 * A directory of runs/ is a Run only under a name a Run id can have: one a
 * Run made by hand (250 characters, say) is damage, named, or every index
 * marker made of it (`<id>@<instance>`) failed, and with it every wait.
 */
function addRunDir(found: RunEntries, base: string, name: string): void {
  if (isPlainName(name)) found.ids.push(name)
  else
    found.strays.push({
      dir: base + sep + name,
      error: corruptStateError(
        base + sep + name,
        'is not named as a Run id can be (letters, digits, "_", "." and "-", not first "-", at most 128 characters)',
      ).message,
    })
}

/**
 * File systems whose directories' link count is 2 plus their subdirectories
 * (statfs type): ext2/3/4, xfs, tmpfs. Others may count every entry (zfs),
 * report 1 (btrfs) or anything (network and FUSE file systems).
 */
const COUNTS_SUBDIRS = new Set([0xef53, 0x58465342, 0x01021994])

/**
 * The names in `dir` when every entry is a directory, known from its link
 * count on a file system that counts subdirectories in it: when the count is
 * 2 plus the number of names, and neither it nor the dir's mtime changed
 * around the listing, no entry is a link or a file. Undefined otherwise (an
 * entry that is no directory, another file system, a change meanwhile): the
 * caller then lists with types.
 */
function namesOfDirsOnly(dir: string): string[] | undefined {
  if (!COUNTS_SUBDIRS.has(statfsSync(dir).type)) return undefined
  const before = statSync(dir, {bigint: true})
  // ext4 past 65,000 subdirectories says 1: no count to trust.
  if (before.nlink < 2n) return undefined
  const names = readdirSync(dir)
  if (before.nlink !== BigInt(names.length + 2)) return undefined
  const after = statSync(dir, {bigint: true})
  return after.nlink === before.nlink && after.mtimeNs === before.mtimeNs ? names : undefined
}

/** Why an entry of runs/ that is no directory is not a Run. */
function strayProblem(path: string, entry: Dirent): string {
  return entry.isSymbolicLink() ? linkedPathError(path).message : corruptStateError(path, 'is not a directory').message
}

/** Ids of every Run directory under the state root (unsorted); a link in runs/ is never one. */
export function listRunIds(home: string): string[] {
  return listRunEntries(home).ids
}

/** Every name in runs/ (dot-names left out), links and other strays included: what prune names as damage. */
export function listRunNames(home: string): string[] {
  const {ids, strays} = listRunEntries(home)
  for (const stray of strays) {
    const name = stray.dir.slice(stray.dir.lastIndexOf(sep) + 1)
    // A name no Run id can have is not reached by id: inspect lists it as damage.
    if (isPlainName(name)) ids.push(name)
  }
  return ids
}
