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
  try {
    return Date.now() - lstatSync(dir).mtimeMs < CREATING_GRACE_MS
  } catch {
    return false
  }
}
