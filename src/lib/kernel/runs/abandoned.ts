/**
 * A state dir without run.json: a launch made it a moment ago and is writing
 * run.json, or a launch died (a full disk, a kill) and left it. Within its
 * grace it is being created and its id is refused; past it, it is abandoned
 * and the next launch of that id reclaims it.
 */
import {lstatSync} from 'node:fs'

/** How long a state dir without run.json counts as being created by another launch. */
export const CREATING_GRACE_MS = 30_000

/**
 * Whether the state dir `dir` (which has no run.json) is still within its
 * creation grace. Judged by its modification time, read with lstat: looking
 * changes nothing in the dir. A check must never take the Run's lock first:
 * the lock is a link made inside the dir, which would restart its clock.
 */
export function isBeingCreated(dir: string): boolean {
  return creationGraceLeftMs(dir) > 0
}

/** How long `dir` (no run.json) stays within its creation grace; 0 when past it or gone. */
export function creationGraceLeftMs(dir: string): number {
  try {
    return Math.max(0, CREATING_GRACE_MS - (Date.now() - lstatSync(dir).mtimeMs))
  } catch {
    return 0
  }
}

/**
 * The fix for a refused id whose dir is being created: when to retry. Said
 * plainly, since "a moment" is wrong for a dir something keeps touching (a
 * Run can make any dir under runs/): it is reclaimed only 30 s after its last
 * change.
 */
export function retryWhenCreated(dir: string): string {
  const seconds = Math.ceil(creationGraceLeftMs(dir) / 1000)
  return `retry in ${seconds}s; a state dir without run.json is reclaimed ${CREATING_GRACE_MS / 1000}s after its last change (${dir})`
}
