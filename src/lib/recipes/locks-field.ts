/**
 * The Recipe field `locks`: a list of lock names or `{name, slots}`. Names may
 * use placeholders (`checkout:{repo}`), so they are checked as names once
 * rendered for a launch; written without placeholders they are checked at
 * load time too.
 */
import type {ActorsError} from '../platform/errors.js'
import {renderString} from './template.js'
import type {Recipe} from './types.js'
import {isLockName, type LockSpec} from '../records/lock.js'

type Fail = (field: string, problem: string, fix: string) => ActorsError

const NAME_FIX =
  'use letters, digits, "_", ".", ":" and "-" (placeholders like {name} allowed), e.g. locks: [repo, {name: gpu, slots: 2}]'
const MAX_SLOTS = 1024

/** Validate the field as written in a Recipe file. */
export function readRecipeLocks(value: unknown, fail: Fail): LockSpec[] {
  if (!Array.isArray(value))
    throw fail('locks', 'is not a list', 'write locks: [repo] or locks: [{name: gpu, slots: 2}]')
  const specs = value.map((entry, i): LockSpec => {
    const field = `locks[${i}]`
    const spec = typeof entry === 'string' ? {name: entry} : entry
    if (spec === null || typeof spec !== 'object' || Array.isArray(spec) || typeof spec.name !== 'string')
      throw fail(field, 'is not a lock name or {name, slots}', NAME_FIX)
    const extra = Object.keys(spec).filter((k) => k !== 'name' && k !== 'slots')
    if (extra.length) throw fail(field, `has unknown key "${extra[0]}"`, 'a lock entry has only name and slots')
    if (!spec.name.includes('{') && !isLockName(spec.name))
      throw fail(field, `${JSON.stringify(spec.name)} is not a valid lock name`, NAME_FIX)
    if (spec.slots !== undefined && (!Number.isInteger(spec.slots) || spec.slots < 1 || spec.slots > MAX_SLOTS)) {
      throw fail(
        field,
        `slots ${JSON.stringify(spec.slots)} is not a whole number from 1 to ${MAX_SLOTS}`,
        'give the capacity, e.g. {name: gpu, slots: 2}',
      )
    }
    return spec.slots === undefined ? {name: spec.name} : {name: spec.name, slots: spec.slots}
  })
  const names = specs.map((s) => s.name)
  const twice = names.find((n, i) => names.indexOf(n) !== i)
  if (twice !== undefined) throw fail('locks', `lists ${JSON.stringify(twice)} twice`, 'list each lock once')
  return specs
}

/** The Recipe's locks for one launch, placeholders rendered; a rendered name that is not a lock name is refused (exit 2). */
export function renderRecipeLocks(recipe: Recipe, scope: Record<string, unknown>, fail: Fail): LockSpec[] {
  const specs = (recipe.locks ?? []).map((spec) => ({...spec, name: renderString(spec.name, scope)}))
  for (const [i, spec] of specs.entries()) {
    if (!isLockName(spec.name))
      throw fail(`locks[${i}]`, `renders to ${JSON.stringify(spec.name)}, which is not a valid lock name`, NAME_FIX)
  }
  const names = specs.map((s) => s.name)
  const twice = names.find((n, i) => names.indexOf(n) !== i)
  if (twice !== undefined)
    throw fail('locks', `renders ${JSON.stringify(twice)} twice`, 'give each lock a distinct name')
  return specs
}
