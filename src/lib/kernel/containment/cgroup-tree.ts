/**
 * A unit's cgroup is a tree, not a folder (issue: a Run can mkdir cgroups
 * inside its own and move its processes there; what read only the unit's
 * own cgroup.procs missed them, an end was delivered while they ran, and
 * rmdir failed on the non-empty tree). Everything that reads a unit's
 * processes or removes its cgroup walks the subtree, within bounds a Run
 * cannot stretch into a long stall: past them the walk says it is
 * incomplete, and the caller fails closed (the unit counts as live, its
 * cgroup as not removable).
 *
 * Runs launched from inside the unit have cgroups of their own below it, at
 * `actors/<home key>/<run id>@<instance>` (unit-path.ts): a normal end and
 * the end proof leave those to their own Runs.
 */
import {readdirSync, readFileSync, rmdirSync} from 'node:fs'
import {join} from 'node:path'
import {readProcStat} from '../../base/platform/process-identity.js'
import {parseRunUnitName, unitAt} from './unit-path.js'

/** Cgroups read in one walk: a Run may make thousands; past this the walk is incomplete. */
export const MAX_CGROUPS = 2048
/** Levels below the unit's own cgroup read in one walk. */
export const MAX_CGROUP_DEPTH = 32

export interface CgroupWalk {
  /** The cgroups found, each before the ones below it (the unit's own first). */
  dirs: string[]
  /** False when a bound was reached or a folder could not be listed: more may lie below. */
  complete: boolean
}

/**
 * The cgroups of the tree at `root`, breadth first. `spare(dir)`: a cgroup
 * left out with everything below it (a nested Run's unit).
 */
export function walkCgroups(root: string, spare?: (dir: string) => boolean): CgroupWalk {
  const dirs: string[] = []
  let complete = true
  let level = [root]
  for (let depth = 0; level.length > 0; depth++) {
    const next: string[] = []
    for (const dir of level) {
      if (dirs.length >= MAX_CGROUPS) return {dirs, complete: false}
      dirs.push(dir)
      let entries: import('node:fs').Dirent[]
      try {
        entries = readdirSync(dir, {withFileTypes: true})
      } catch (error) {
        // The unit's own cgroup may be gone (it ended); a sub-cgroup removed meanwhile has nothing to read either.
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') complete = false
        continue
      }
      for (const entry of entries) {
        if (!entry.isDirectory()) continue
        const below = join(dir, entry.name)
        if (spare?.(below)) continue
        if (depth + 1 > MAX_CGROUP_DEPTH) complete = false
        else next.push(below)
      }
    }
    level = next
  }
  return {dirs, complete}
}

/** The live (non-zombie) processes of the cgroups `dirs`, each cgroup's own only. */
export function procsOf(dirs: readonly string[], keep: (pid: number) => boolean = () => true): number[] {
  const pids = new Set<number>()
  for (const dir of dirs) {
    let text: string
    try {
      text = readFileSync(join(dir, 'cgroup.procs'), 'utf8')
    } catch {
      continue
    }
    for (const line of text.split('\n')) {
      const pid = Number(line)
      if (!(pid > 0) || pids.has(pid)) continue
      const state = readProcStat(pid)?.state
      if (state !== undefined && state !== 'Z' && keep(pid)) pids.add(pid)
    }
  }
  return [...pids]
}

/** Whether `dir` is the unit of a Run launched from inside another (`…/actors/<home key>/<run id>@<instance>`). */
export function isNestedRunCgroup(dir: string): boolean {
  const parts = dir.split('/')
  const unit = unitAt(parts, parts.length - 1)
  return unit !== undefined && parseRunUnitName(unit.unit) !== undefined
}

/**
 * Remove the tree at `root` bottom-up (rmdir refuses a cgroup with
 * processes or cgroups below it). True once the tree is gone; false when a
 * cgroup of it stays (one still populated, or a walk past its bounds: a
 * later prune goes on from there).
 */
export function removeCgroupTree(root: string): boolean {
  const walk = walkCgroups(root)
  let removed = walk.complete
  for (const dir of [...walk.dirs].reverse()) {
    try {
      rmdirSync(dir)
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') removed = false
    }
  }
  return removed
}
