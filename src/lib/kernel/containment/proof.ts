/**
 * A unit record read back from a file a Run can write (run.json
 * `containment`, a lock holder's `unit`) is a claim, not a fact (SPEC:
 * Containment; issue: a Run must not turn `kill` against someone else). A
 * cgroup path is accepted as a kill, pause or cleanup target only when it is
 * the one the kernel made for that unit: `<a cgroup mount>/…/actors/<home
 * key>/<unit>`, a Run's unit being named `<run id>@<instance>` after the
 * state dir the kernel resolved (unit-path.ts runUnitName); a tracked marker
 * only when it names that unit. Anything else is refused, naming the file,
 * and nothing is done through it.
 */
import {basename, join} from 'node:path'
import {ActorsError, EXIT} from '../../base/platform/errors.js'
import {isCgroupDir} from './cgroup-fs.js'
import {runUnitName, unitAt} from './unit-path.js'
import {isContainmentRecord, type ContainmentRecord} from './unit.js'

/** Whose unit a record must be: the unit's name (runUnitName for a Run, a `lock exec`'s unit id) and, when known, the state root's key. */
export interface UnitOwner {
  unit: string
  /** homeKey(home): the folder a state root's unit cgroups live in. */
  homeKey?: string
  /** The file the record was read from, for the refusal. */
  file: string
}

const UNIT_NAME = /^[A-Za-z0-9][A-Za-z0-9_.@-]*$/

/** Whether `path` is the cgroup the kernel made for `owner`'s unit (see the module comment). */
export function isOwnUnitCgroup(path: string, owner: Pick<UnitOwner, 'unit' | 'homeKey'>): boolean {
  if (!UNIT_NAME.test(owner.unit) || !isCgroupDir(path)) return false
  const parts = path.split('/')
  const unit = parts.length >= 4 ? unitAt(parts, parts.length - 1) : undefined
  if (unit?.unit !== owner.unit) return false
  return owner.homeKey === undefined || unit.homeKey === owner.homeKey
}

/**
 * The record, once proven to be `owner`'s unit; undefined when there is none
 * (a Run from before containment: tracked by its verified processes).
 * Throws exit 1, naming the file, for a record that names another target.
 */
export function provenRecord(record: unknown, owner: UnitOwner): ContainmentRecord | undefined {
  if (record === undefined || record === null) return undefined
  if (!isContainmentRecord(record)) throw refusal(owner, 'is not a containment record this kernel writes')
  if (record.kind === 'tracked') {
    // A Run's tracked unit carries no marker of its own (its marker is its instance); a lock exec's names its unit id.
    if (record.marker !== undefined && record.marker !== `ACTORS_UNIT=${owner.unit}`)
      throw refusal(owner, `names the marker ${JSON.stringify(record.marker)}, not this unit's`)
    return record
  }
  const paths = [record.path, ...Object.values(record.v1 ?? {})]
  for (const path of paths) {
    if (typeof path !== 'string' || !isOwnUnitCgroup(path, owner))
      throw refusal(owner, `names the cgroup ${JSON.stringify(path)}, not the one actors made for ${owner.unit}`)
  }
  return record
}

function refusal(owner: UnitOwner, problem: string): ActorsError {
  return new ActorsError(
    `${owner.file}: containment ${problem}; nothing was signalled or removed through it`,
    EXIT.failed,
    `a Run's unit is the cgroup actors/<home key>/${owner.unit} (or its tracked processes); inspect the file by hand`,
  )
}

/**
 * The owner a Run's own unit record must prove: the unit named after its
 * state dir (`dir`, as the kernel resolved it) and the instance run.json
 * records; the refusal names that run.json.
 */
export function runUnitOwner(dir: string, meta: {run_instance_id: string}, homeKey?: string): UnitOwner {
  return {
    unit: runUnitName(basename(dir), meta.run_instance_id),
    file: join(dir, 'run.json'),
    ...(homeKey ? {homeKey} : {}),
  }
}
