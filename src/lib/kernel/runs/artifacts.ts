/** Recording a Run's declared artifacts in its result: size and sha256 of each file. */
import {nodeCrypto} from '../../base/platform/builtins.js'
import {openSync, readSync, closeSync, statSync} from 'node:fs'
import {isAbsolute, resolve} from 'node:path'
import type {ArtifactRecord} from '../../base/records/run.js'

function sha256File(file: string): string {
  const hash = nodeCrypto().createHash('sha256')
  const fd = openSync(file, 'r')
  try {
    const buffer = Buffer.allocUnsafe(1 << 16)
    let read: number
    while ((read = readSync(fd, buffer, 0, buffer.length, null)) > 0) hash.update(buffer.subarray(0, read))
  } finally {
    closeSync(fd)
  }
  return hash.digest('hex')
}

/** Describe each declared artifact (paths relative to the Run's cwd); missing files are recorded as missing. */
export function collectArtifacts(declared: Record<string, string> | undefined, cwd: string): ArtifactRecord[] {
  const records: ArtifactRecord[] = []
  for (const [name, path] of Object.entries(declared ?? {})) {
    const full = isAbsolute(path) ? path : resolve(cwd, path)
    try {
      const stat = statSync(full)
      if (!stat.isFile()) throw new Error('not a file')
      records.push({name, path: full, bytes: stat.size, sha256: sha256File(full)})
    } catch {
      records.push({name, path: full, bytes: null, sha256: null, missing: true})
    }
  }
  return records
}
