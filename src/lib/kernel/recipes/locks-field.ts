/**
 * The Recipe field `locks`: a list of lock names or `{name, slots}`. Names may
 * use placeholders (`checkout:{repo}`), so they are checked as names once
 * rendered for a launch; written without placeholders they are checked at
 * load time too.
 */
import type {ActorsError} from '../../base/platform/errors.js'
import {renderString} from './template.js'
import type {Recipe} from './types.js'
import {isLockName, type LockSpec} from '../../base/records/lock.js'
import {refuse, says, saysBy, show} from '../../base/platform/zod-issues.js'
import type {Zod} from '../../base/platform/zod.js'

type Fail = (field: string, problem: string, fix: string) => ActorsError

const NAME_FIX =
  'use letters, digits, "_", ".", ":" and "-" (placeholders like {name} allowed), e.g. locks: [repo, {name: gpu, slots: 2}]'
const MAX_SLOTS = 1024
const SLOTS_FIX = 'give the capacity, e.g. {name: gpu, slots: 2}'

/** The field as written in a Recipe file (schema.ts): each name once; one with placeholders is checked once rendered. */
export function locksSchema(z: Zod) {
  const notLock = says('is not a lock name or {name, slots}', NAME_FIX)
  const slots = says((v) => `slots ${show(v)} is not a whole number from 1 to ${MAX_SLOTS}`, SLOTS_FIX, {up: 1})
  const entry = z.strictObject(
    {name: z.string(), slots: z.optional(z.int(slots).check(z.gte(1, slots), z.lte(MAX_SLOTS, slots)))},
    saysBy((_, issue) =>
      issue.code === 'unrecognized_keys'
        ? {problem: `has unknown key "${issue.keys?.[0]}"`, fix: 'a lock entry has only name and slots'}
        : undefined,
    ),
  )
  const lock = z.union([z.string(), entry], notLock)
  return z.pipe(
    z.array(lock, says('is not a list', 'write locks: [repo] or locks: [{name: gpu, slots: 2}]')),
    z.transform((entries, ctx) => {
      const specs = entries.map((e) => (typeof e === 'string' ? {name: e} : e))
      for (const [i, spec] of specs.entries())
        if (!spec.name.includes('{') && !isLockName(spec.name))
          refuse(ctx, {at: [i], problem: `${show(spec.name)} is not a valid lock name`, fix: NAME_FIX})
      const names = specs.map((s) => s.name)
      const twice = names.find((n, i) => names.indexOf(n) !== i)
      if (twice !== undefined) refuse(ctx, {problem: `lists ${show(twice)} twice`, fix: 'list each lock once'})
      return specs
    }),
  )
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
