/**
 * The Recipe file format as one zod schema (SPEC: Recipes): what loadRecipeFile() checks, and the JSON
 * Schema `actors recipes --schema` prints for editors. Each part says what a refusal names (base/platform/zod-issues.ts).
 * Where a check needs more than a type (durations, arg declarations, action names), a refinement or
 * transform adds it; steps and locks have their own modules (steps.ts, locks-field.ts), and the
 * executors keep the schema of their options (executors/choice.ts).
 */
import type {ActorsError} from '../../base/platform/errors.js'
import {parseDuration} from '../../base/platform/duration.js'
import {didYouMean} from '../../base/platform/did-you-mean.js'
import {isActionName, RUNTIME_ACTIONS} from '../../base/records/actions.js'
import {recipeExecutorSchema} from '../executors/index.js'
import {LIMIT_FIXES, parseCpus, parseMemorySize, parsePids} from '../containment/limits.js'
import {parseArgSpec} from './args.js'
import type {ArgSpec} from './types.js'
import {stepListSchema, templateSchema} from './steps.js'
import {locksSchema} from './locks-field.js'
import {type Ctx, refuse, type Said, says, saysBy, show, unknownKey} from '../../base/platform/zod-issues.js'
import {zodJsonSchema, zodLibrary, type Zod} from '../../base/platform/zod.js'
import type {SomeType} from 'zod/v4/core'

let fields: ReturnType<typeof fieldSchemas> | undefined
const made = new Map<string, SomeType>()

/**
 * The schema of a Recipe file that has `keys` (every field by default, as the JSON Schema has): each
 * field's schema is made the first time a Recipe has the field, so a launch pays for the few its Recipe
 * uses (zod itself is loaded on first use: base/platform/zod.ts). A key that is no field is refused by name.
 */
export function recipeFileSchema(keys: string[] = recipeFields()) {
  const z = zodLibrary()
  const makers = fieldMakers()
  const all = Object.keys(makers)
  const known = keys.filter((key) => all.includes(key))
  for (const key of known) if (!made.has(key)) made.set(key, makers[key as keyof typeof makers]())
  return z
    .strictObject(
      Object.fromEntries(known.map((key) => [key, made.get(key)!])),
      saysBy((_, issue) => unknownKey(issue, 'is not a Recipe field', all)),
    )
    .check(z.superRefine(checkAcrossFields))
}

/** The fields a Recipe file may have, in the order messages list them. */
export function recipeFields(): string[] {
  return Object.keys(fieldMakers())
}

function fieldMakers(): ReturnType<typeof fieldSchemas> {
  fields ??= fieldSchemas(zodLibrary())
  return fields
}

/** The JSON Schema (draft-07, as YAML language servers read it) of a Recipe file as written. */
export function recipeJsonSchema(): Record<string, unknown> {
  const json = zodJsonSchema()(recipeFileSchema(), {target: 'draft-07', io: 'input', unrepresentable: 'any'})
  return {...json, title: 'actors Recipe', description: 'A Recipe file of actors (SPEC: Recipes; docs/recipes.md)'}
}

/** How to make the schema of each field. */
function fieldSchemas(z: Zod) {
  let scalarSchema: ReturnType<Zod['union']> | undefined
  const scalar = () => (scalarSchema ??= z.union([z.string(), z.number(), z.boolean()]))
  let stepList: ReturnType<typeof stepListSchema> | undefined
  const steps = (field: string) => z.optional((stepList ??= stepListSchema(z, scalar()))(field))
  const bool = (fix: string) => () => z.optional(z.boolean(says((v) => `${show(v)} is not true or false`, fix)))
  const oneOf = (values: [string, string], fix: string) => () =>
    z.optional(
      z.enum(
        values,
        says((v) => `${show(v)} is not ${values.join(' or ')}`, fix),
      ),
    )
  const duration = () =>
    z.optional(z.union([z.string(), z.number()], says('is not a duration', DURATION_FIX)).check(durationCheck(z)))
  const times = says((v) => `${show(v)} is not a whole number of attempts from 1 to 100`, RETRY_FIX)
  const nonEmpty = says('is not a non-empty string', 'give a directory, e.g. cwd: "{recipe_dir}"')
  return {
    description: () =>
      z.optional(
        z.pipe(
          z.string(says('is not a string', 'write one line of text')),
          z.transform((s) => s.trim()),
        ),
      ),
    args: () => z.optional(z.nullable(argsSchema(z))),
    template: () => z.optional(templateSchema(z, scalar())),
    sequence: () => steps('sequence'),
    parallel: () => steps('parallel'),
    timeout: duration,
    retry: () => z.optional(z.int(times).check(z.gte(1, times), z.lte(100, times))),
    kill_grace: duration,
    cwd: () => z.optional(z.string(nonEmpty).check(z.minLength(1, nonEmpty))),
    env: () => z.optional(nameMap(z, 'env', ENV_NAME, 'an environment variable name (letters, digits, "_")')),
    control: () => z.optional(controlSchema(z)),
    artifacts: () =>
      z.optional(nameMap(z, 'artifacts', ARTIFACT_NAME, 'an artifact name (letters, digits, "_", "." and "-")')),
    singleton: bool('write singleton: true or singleton: false'),
    notification: oneOf(['normal', 'silent'], 'write notification: normal or notification: silent'),
    locks: () => z.optional(locksSchema(z)),
    executor: () => z.optional(recipeExecutorSchema(z)),
    inbox: oneOf(['stdin', 'file'], INBOX_FIX),
    resume: bool('write resume: false to refuse resuming a finished Run with `actors send`'),
    limits: () => z.optional(limitsSchema(z)),
    option_args: () => z.optional(z.array(z.string(optionArgs), optionArgs)),
  }
}

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/
const ARTIFACT_NAME = /^[A-Za-z0-9_.-]+$/
const DURATION_FIX = 'use 500ms, 30s, 5m, 1h or a number of seconds'
const optionArgs = says('is not a list of arg names', 'write option_args: [NAME, ...] with args declared under args', {
  field: 'option_args',
})
const RETRY_FIX = 'give the total number of attempts, e.g. retry: 3 (1 means no retry)'
const INBOX_FIX =
  'write inbox: stdin (messages arrive as lines on stdin) or inbox: file (read them with `actors inbox`)'

/** What no one field can say: exactly one of template, sequence and parallel; option_args names declared args. */
function checkAcrossFields(
  data: {args?: ArgSpec[] | null; option_args?: string[]} & Record<string, unknown>,
  ctx: Ctx,
) {
  const kinds = (['template', 'sequence', 'parallel'] as const).filter((k) => data[k] !== undefined)
  if (kinds.length === 0)
    refuse(ctx, {
      field: 'template',
      problem: 'is missing',
      fix: 'give exactly one of template, sequence or parallel (template: echo hello)',
    })
  else if (kinds.length > 1)
    refuse(ctx, {
      field: kinds[1],
      problem: `cannot be combined with "${kinds[0]}"`,
      fix: 'give exactly one of template, sequence or parallel',
    })
  const names = (data.args ?? []).map((arg) => arg.name)
  const stray = data.option_args?.find((name) => !names.includes(name))
  if (stray !== undefined)
    refuse(ctx, {
      field: 'option_args',
      problem: `names "${stray}", which is not a declared arg`,
      fix: `${didYouMean(stray, names)}list only args declared under args${names.length ? ` (${names.join(', ')})` : ''}`,
    })
}

function durationCheck(z: Zod) {
  return z.superRefine((value: string | number, ctx: Ctx) => {
    const field = 'duration'
    try {
      parseDuration(value, field)
    } catch (error) {
      refuse(ctx, {
        problem: `${show(value)} is not a valid duration`,
        fix: (error as ActorsError).fix ?? 'use 500ms, 30s, 5m, 1h',
      })
    }
  })
}

/** `args`: `name:type=default` declarations (args.ts), each name once. */
function argsSchema(z: Zod) {
  const fix = 'write each arg as "name", "name:type" or "name:type=default" (quote it in YAML)'
  const entry = says((v) => `args entry ${show(v)} is not a string`, fix, {field: 'args'})
  const list = says('is not a list', 'write args: ["name", "count:int=1"]')
  return z.pipe(
    z.array(z.string(entry), list),
    z.transform((entries, ctx) => {
      const specs: ArgSpec[] = []
      for (const text of entries) {
        let spec: ArgSpec
        try {
          spec = parseArgSpec(text)
        } catch (error) {
          if (!(error instanceof Error) || !('fix' in error)) throw error
          refuse(ctx, {problem: error.message, fix: String(error.fix)})
          return z.NEVER
        }
        if (specs.some((s) => s.name === spec.name)) {
          refuse(ctx, {problem: `declares "${spec.name}" twice`, fix: 'declare each arg once'})
          return z.NEVER
        }
        specs.push(spec)
      }
      return specs
    }),
  )
}

/** `control`: the actions the Run declares (any but kill, each once). */
function controlSchema(z: Zod) {
  const badName = (v: unknown): Said => ({
    field: 'control',
    problem: `action ${show(v)} is not a valid name`,
    fix: 'use lowercase letters, digits, "_" and "-", starting with a letter (at most 64 characters)',
  })
  return z.array(z.string(saysBy(badName)), says('is not a list of action names', 'write control: [next, prev]')).check(
    z.superRefine((actions: string[], ctx: Ctx) => {
      const bad = actions.find((a) => !isActionName(a))
      if (bad !== undefined) refuse(ctx, badName(bad))
      // A Recipe may take over pause/resume/stop/status (its service handles them, SPEC: Control); kill is always the kernel's.
      else if (actions.includes('kill'))
        refuse(ctx, {
          problem: 'action "kill" is always the kernel\'s',
          fix: `drop it; a service may declare ${RUNTIME_ACTIONS.filter((a) => a !== 'kill').join(', ')} to handle them itself`,
        })
      else if (new Set(actions).size !== actions.length)
        refuse(ctx, {problem: 'lists an action twice', fix: 'list each action once'})
    }),
  )
}

/** `env` and `artifacts`: names (matching `pattern`) to strings; numbers and bools become strings. */
function nameMap(z: Zod, field: string, pattern: RegExp, what: string) {
  const value = saysBy((_, issue) => {
    const key = issue.path?.at(-1)
    return {field, problem: `value of "${String(key)}" is not a string`, fix: `quote it: ${String(key)}: "..."`}
  })
  return z.pipe(
    z
      .record(
        z.string(),
        z.union([z.string(), z.number(), z.boolean()], value),
        says('is not a mapping of names to strings', `write ${field}: {NAME: value}`),
      )
      .check(
        z.superRefine((map: Record<string, unknown>, ctx: Ctx) => {
          const key = Object.keys(map).find((k) => !pattern.test(k))
          if (key !== undefined) refuse(ctx, {problem: `key "${key}" is not ${what}`, fix: `rename "${key}"`})
        }),
      ),
    z.transform((map) => Object.fromEntries(Object.entries(map).map(([k, v]) => [k, String(v)]))),
  )
}

/** `limits: {memory, cpu, pids}`, as containment/limits.ts reads each (SPEC: Containment). */
function limitsSchema(z: Zod) {
  const limit = (parse: (v: unknown) => unknown, fix: string) => {
    const bad: [(v: unknown) => string, string] = [(v) => `${show(v)} is not valid`, `give ${fix}`]
    return z.optional(
      z.pipe(
        z.union([z.string(), z.number()], says(...bad)),
        z.transform((v, ctx) => {
          const parsed = parse(v)
          if (parsed !== undefined) return parsed
          refuse(ctx, {problem: bad[0](v), fix: bad[1]})
          return z.NEVER
        }),
      ),
    )
  }
  const memory = (v: unknown) => (parseMemorySize(v) === undefined ? undefined : v)
  return z.strictObject(
    {
      memory: limit(memory, LIMIT_FIXES.memory),
      cpu: limit(parseCpus, LIMIT_FIXES.cpu),
      pids: limit(parsePids, LIMIT_FIXES.pids),
    },
    saysBy((_, issue) =>
      issue.code === 'unrecognized_keys'
        ? {at: [issue.keys?.[0] ?? ''], problem: 'is not a limit', fix: 'limits takes memory, cpu and pids'}
        : {problem: 'is not a mapping', fix: 'write limits: {memory: 512M, cpu: 1.5, pids: 256}'},
    ),
  )
}
