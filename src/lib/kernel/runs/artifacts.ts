/** Recording a Run's declared artifacts in its result: size and sha256 of each file. */
import {nodeCrypto} from '../../base/platform/builtins.js'
import {
  closeSync,
  constants,
  copyFileSync,
  fchmodSync,
  fstatSync,
  openSync,
  readlinkSync,
  readSync,
  realpathSync,
  unlinkSync,
} from 'node:fs'
import {basename, isAbsolute, join, relative, resolve} from 'node:path'
import {makePrivateDir, PRIVATE_FILE_MODE, refuseLinkedDir} from '../../base/platform/private-files.js'
import type {ArtifactRecord} from '../../base/records/run.js'

/**
 * The most of one artifact hashed (256 MiB, about a second here). The hash is
 * taken after the command ended, by the supervisor, outside the Run's unit
 * and timeout, and the end waits for it: a Run that declares a huge (or
 * sparse) file must not hold its own end, or the machine, for minutes.
 */
export const ARTIFACT_HASH_LIMIT = 256 * 1024 * 1024

/**
 * Size and sha256 of the regular file at `full`, opened once and checked on
 * that descriptor (a FIFO swapped in after a check would block an open for
 * reading, and one never written would hold the end for good).
 */
function describeFile(full: string): {bytes: number; sha256: string | null} | undefined {
  let fd: number
  try {
    fd = openSync(full, constants.O_RDONLY | constants.O_NONBLOCK)
  } catch {
    return undefined
  }
  try {
    const stat = fstatSync(fd)
    if (!stat.isFile()) return undefined
    if (stat.size > ARTIFACT_HASH_LIMIT) return {bytes: stat.size, sha256: null}
    const hash = nodeCrypto().createHash('sha256')
    const buffer = Buffer.allocUnsafe(1 << 16)
    let total = 0
    let read: number
    // A file that grows while it is read is cut at the limit too.
    while ((read = readSync(fd, buffer, 0, buffer.length, null)) > 0) {
      total += read
      if (total > ARTIFACT_HASH_LIMIT) return {bytes: stat.size, sha256: null}
      hash.update(buffer.subarray(0, read))
    }
    return {bytes: stat.size, sha256: hash.digest('hex')}
  } catch {
    return undefined
  } finally {
    closeSync(fd)
  }
}

/**
 * Describe each declared artifact (paths relative to the Run's cwd); missing
 * files (or anything but a regular file) are recorded as missing, and one over
 * ARTIFACT_HASH_LIMIT with its size and `sha256: null, hash_skipped: "too_large"`.
 */
export function collectArtifacts(declared: Record<string, string> | undefined, cwd: string): ArtifactRecord[] {
  const records: ArtifactRecord[] = []
  for (const [name, path] of Object.entries(declared ?? {})) {
    const full = isAbsolute(path) ? path : resolve(cwd, path)
    const described = describeFile(full)
    if (!described) records.push({name, path: full, bytes: null, sha256: null, missing: true})
    else if (described.sha256 === null) records.push({name, path: full, ...described, hash_skipped: 'too_large'})
    else records.push({name, path: full, ...described})
  }
  return records
}

/** An artifact kept by `prune --keep-artifacts`: where its copy is. */
export interface KeptArtifact {
  name: string
  path: string
}

/**
 * Copy the artifacts of the Run `id` (state dir `dir`) that lie inside that
 * dir to `<home>/artifacts/<id>/`, before the dir is removed. A Run can link
 * anything it can write: `artifacts/` itself (the copies went wherever it
 * pointed) and any folder of its own dir (a file outside the state root was
 * copied in). So `artifacts/` and the Run's folder there must be no links,
 * and each source is opened without following a link and kept only when the
 * file it opened lies inside the state dir.
 */
export function keepArtifacts(
  home: string,
  id: string,
  dir: string,
  artifacts: readonly ArtifactRecord[],
): KeptArtifact[] {
  const kept: KeptArtifact[] = []
  const root = join(home, 'artifacts')
  const keptDir = join(root, id)
  let realDir: string | undefined
  for (const artifact of artifacts) {
    if (artifact.missing || relative(dir, artifact.path).startsWith('..')) continue
    realDir ??= realpathSync(dir)
    let source: number
    try {
      source = openSync(artifact.path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK)
    } catch {
      continue // gone, or a link in its own place
    }
    try {
      // Where the opened file really is, whatever links led there: it must be the Run's own.
      const opened = readlinkSync(`/proc/self/fd/${source}`)
      if (relative(realDir, opened).startsWith('..') || !fstatSync(source).isFile()) continue
      refuseLinkedDir(root)
      makePrivateDir(root)
      refuseLinkedDir(keptDir)
      makePrivateDir(keptDir)
      const target = join(keptDir, basename(artifact.path))
      try {
        unlinkSync(target)
      } catch {}
      // COPYFILE_EXCL: a link planted at the target after the unlink is never written through.
      copyFileSync(`/proc/self/fd/${source}`, target, constants.COPYFILE_EXCL)
      chmodPrivate(target)
      kept.push({name: artifact.name, path: target})
    } finally {
      closeSync(source)
    }
  }
  return kept
}

/** A copy keeps its source's mode: made private (0600) as everything the kernel makes in the state root, never through a link. */
function chmodPrivate(file: string): void {
  const fd = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK)
  try {
    fchmodSync(fd, PRIVATE_FILE_MODE)
  } finally {
    closeSync(fd)
  }
}
