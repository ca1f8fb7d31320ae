/**
 * `prune`'s part of containment: the cgroups of a state root's Runs that no
 * longer exist (or ended, yet their cgroup stayed: a supervisor killed
 * between its end and its clean-up) are emptied and removed. Only this
 * root's folder is looked at (cgroup-unit.ts unitsDir), and `lock exec`
 * units are left to the lock operations that own them.
 */
import {readdirSync} from 'node:fs'
import {join} from 'node:path'
import {discoverCgroupBases} from './cgroup-fs.js'
import {CgroupUnit, unitsDir} from './cgroup-unit.js'
import {homeKey, killUnitSync} from './index.js'
import {parseRunUnitName} from './unit-path.js'

/** The names of the Run units with a cgroup below this process's own for state root `home`. */
export function listUnitCgroups(home: string): string[] {
  const bases = discoverCgroupBases()
  if (!bases) return []
  try {
    return readdirSync(unitsDir(bases.unified, homeKey(home)), {withFileTypes: true})
      .filter((entry) => entry.isDirectory() && !entry.name.startsWith('lock-'))
      .map((entry) => entry.name)
  } catch {
    return []
  }
}

/**
 * Remove the cgroups among `ids` (listed by listUnitCgroups *before* the live
 * Runs were read, so a Run made meanwhile is never among them) whose Run is
 * not live (`live`: instances), ending what is left in them first. Returns the
 * names removed.
 */
export function removeUnitCgroups(home: string, ids: string[], live: ReadonlySet<string>): string[] {
  const bases = discoverCgroupBases()
  if (!bases) return []
  const removed: string[] = []
  const key = homeKey(home)
  for (const id of ids) {
    if (live.has(parseRunUnitName(id)?.instance ?? id)) continue
    const v1: Record<string, string> = {}
    for (const [controller, base] of Object.entries(bases.v1)) if (base) v1[controller] = join(unitsDir(base, key), id)
    const unit = new CgroupUnit({kind: 'cgroup', path: join(unitsDir(bases.unified, key), id), v1})
    // Runs launched from inside an ended Run live on in its cgroup: leave it to them.
    if (unit.members().length > unit.strays().length) continue
    if (killUnitSync(unit).length === 0 && unit.remove()) removed.push(id)
  }
  return removed
}
