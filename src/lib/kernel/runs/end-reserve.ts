/**
 * Room for a Run's end on a full disk (SPEC: Run state dir, Supervision):
 * every launch writes a small reserve file into the Run's state dir before
 * anything else, and whoever records the end (the supervisor, or a read that
 * settles a lost Run) removes it first, so the trace's last event,
 * result.json and run.json's mirror of it fit even when the command's output
 * filled the disk. A launch that cannot even write the reserve is refused
 * before the Run exists.
 */
import {closeSync, openSync, rmSync, writeSync} from 'node:fs'
import {join} from 'node:path'
import {ActorsError, EXIT} from '../../base/platform/errors.js'
import {unlinkQuietly} from '../../base/platform/state-files.js'

/** The reserve's name in a state dir (a dot name: never a Run file anyone reads). */
export const END_RESERVE = '.end-reserve'

/** What an end writes, with room to spare: trace line, result.json, run.json's rewrite (whole blocks each). */
const BASE_BYTES = 64 * 1024

/**
 * Write the reserve for a Run whose run.json is about `metaBytes` long (its
 * rewrite at the end needs that much again). Real blocks, not a sparse file:
 * the space is taken now. A full disk refuses the launch (exit 1, naming the
 * dir); the partial reserve is removed.
 */
export function makeEndReserve(dir: string, metaBytes: number): void {
  const file = join(dir, END_RESERVE)
  const bytes = BASE_BYTES + 2 * metaBytes
  let fd: number | undefined
  try {
    fd = openSync(file, 'w', 0o600)
    const chunk = Buffer.alloc(Math.min(bytes, 64 * 1024))
    for (let written = 0; written < bytes; ) written += writeSync(fd, chunk, 0, Math.min(chunk.length, bytes - written))
  } catch (error) {
    if (fd !== undefined) closeSync(fd)
    fd = undefined
    rmSync(file, {force: true})
    const code = (error as NodeJS.ErrnoException).code
    if (code !== 'ENOSPC' && code !== 'EDQUOT') throw error
    throw new ActorsError(
      `no space left on the device of ${dir} to start a Run (${code}): its end could not be recorded`,
      EXIT.failed,
      'free space on that file system (actors prune removes finished Runs), or point --home at another one',
    )
  } finally {
    if (fd !== undefined) closeSync(fd)
  }
}

/** Make the reserve, then `write` the Run's start; a start that fails gives the room back (no Run to end). */
export function withEndReserve(dir: string, metaBytes: number, write: () => void): void {
  makeEndReserve(dir, metaBytes)
  try {
    write()
  } catch (error) {
    releaseEndReserve(dir)
    throw error
  }
}

/** Free the reserve just before an end is written (nothing when it is gone already). */
export function releaseEndReserve(dir: string): void {
  unlinkQuietly(join(dir, END_RESERVE))
}
