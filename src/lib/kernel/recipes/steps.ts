/**
 * The steps that may stand wherever a template stands inside `sequence` and
 * `parallel` (SPEC: Recipes): a template, `repeat: {times, template |
 * sequence, continue_on_failure}` and `use: RECIPE` with `with:`. Their
 * syntax is checked by schema.ts; which Recipe a `use` names by use.ts, and
 * rendering them into a plan is plan.ts's.
 */
import {shellSplit} from '../../base/platform/shell-split.js'
import {ARG_NAME} from './arg-name.js'
import {
  isMapping,
  recipeIssue,
  refuse,
  type Said,
  says,
  saysBy,
  show,
  unknownKey,
} from '../../base/platform/zod-issues.js'
import type {Zod} from '../../base/platform/zod.js'
import type {ZodMiniType} from 'zod/mini'

export type Template = string[] | string

export interface RepeatStep {
  repeat: {times: number; template?: Template; sequence?: Step[]; continue_on_failure: boolean}
}

export interface UseStep {
  use: string
  /** The used Recipe's args as written (strings may hold the caller's placeholders); arrays for `array` args. */
  with: Record<string, string | string[]>
}

export type Step = Template | RepeatStep | UseStep

/** The most iterations one `repeat` may have: every iteration is rendered before start. */
export const MAX_REPEAT_TIMES = 1000
const TIMES_FIX = 'give how many times the body runs, e.g. times: 3'
const COF_FIX = 'write continue_on_failure: true to run every iteration even after one fails'

/** Whether a step is a `repeat`. */
export function isRepeat(step: Step): step is RepeatStep {
  return typeof step === 'object' && !Array.isArray(step) && 'repeat' in step
}

/** Whether a step is a `use`. */
export function isUse(step: Step): step is UseStep {
  return typeof step === 'object' && !Array.isArray(step) && 'use' in step
}

/** Every template in a list of steps with its field name and whether `{iteration}` is known there (placeholder checks). */
export function stepTemplates(
  steps: Step[],
  field: string,
  inRepeat: boolean,
): Array<{field: string; template: Template; inRepeat: boolean}> {
  return steps.flatMap((step, i) => {
    const here = `${field}[${i}]`
    if (isRepeat(step)) {
      const {template, sequence} = step.repeat
      return template !== undefined
        ? [{field: `${here}.repeat.template`, template, inRepeat: true}]
        : stepTemplates(sequence ?? [], `${here}.repeat.sequence`, true)
    }
    if (isUse(step))
      return Object.entries(step.with).map(([name, v]) => ({
        field: `${here}.with.${name}`,
        template: Array.isArray(v) ? v : [v],
        inRepeat,
      }))
    return [{field: here, template: step, inRepeat}]
  })
}

/** A step as words for `actors recipes NAME`: templates as written, repeat and use summarised. */
export function stepWords(step: Step): string[] {
  if (isRepeat(step)) {
    const {times, template, sequence, continue_on_failure: cof} = step.repeat
    const body =
      template !== undefined
        ? templateWords(template)
        : (sequence ?? []).flatMap((s, i) => [...(i > 0 ? [';'] : []), ...stepWords(s)])
    return [`repeat(${times}${cof ? ', continue_on_failure' : ''}):`, ...body]
  }
  if (isUse(step))
    return [
      'use:',
      step.use,
      ...Object.entries(step.with).map(([k, v]) => `${k}=${Array.isArray(v) ? v.join(',') : v}`),
    ]
  return templateWords(step)
}

/** The argv words of a template as written (strings are split, lists kept). */
export function templateWords(template: Template): string[] {
  return typeof template === 'string' ? shellSplit(template) : template
}

/** A template as written (schema.ts): a string split like a shell, or a non-empty list of argv words. */
export function templateSchema(z: Zod, scalar: ReturnType<Zod['union']>) {
  const notTemplate = saysBy((v) =>
    Array.isArray(v)
      ? {
          problem: `word ${show(v.find((w) => !['string', 'number', 'boolean'].includes(typeof w)))} is not a string`,
          fix: 'write every argv word as a string',
        }
      : {
          problem: 'is not a string or a list of strings',
          fix: 'write template: echo hello, or template: [echo, hello]',
        },
  )
  return z.pipe(
    z.union([z.string(), z.array(scalar)], notTemplate),
    z.transform((value, ctx): Template => {
      if (Array.isArray(value)) {
        if (value.length === 0)
          refuse(ctx, {problem: 'is an empty list', fix: 'give the command and its arguments, e.g. [echo, hello]'})
        return value.map(String)
      }
      try {
        if (shellSplit(value).length === 0)
          refuse(ctx, {problem: 'is empty', fix: 'give the command to run, e.g. echo hello'})
      } catch (error) {
        refuse(ctx, {
          problem: `cannot be split into words: ${(error as Error).message}`,
          fix: 'close every quote; or write the template as a list of argv words',
        })
      }
      return value
    }),
  )
}

type StepList = ZodMiniType<Step[], unknown>

/**
 * The steps of `sequence` and `parallel` (schema.ts): each a template, a `repeat` or a `use`. A union
 * refuses with every branch's issues: the step's shape chooses the branch whose issue is named.
 */
export function stepListSchema(z: Zod, scalar: ReturnType<Zod['union']>): (field: string) => StepList {
  const template = templateSchema(z, scalar)
  const list = (field: string): StepList => {
    const notList = says('is not a non-empty list of templates', `write ${field}: followed by "- command ..." lines`)
    return z.array(step, notList).check(z.minLength(1, notList)) as StepList
  }
  const step = z.union(
    [template, repeatSchema(z, template, () => list('sequence')), useSchema(z, scalar)],
    saysBy((v, issue) => {
      const branch = !isMapping(v) ? 0 : 'repeat' in v ? 1 : 'use' in v ? 2 : -1
      if (branch === -1)
        return {
          problem: `is a mapping without repeat or use (keys: ${Object.keys(v as object).join(', ') || 'none'})`,
          fix: 'write a template (echo hi), a repeat: {times: 3, template: ...} or a use: RECIPE step',
        }
      const first = issue.errors?.[branch]?.[0]
      return first && recipeIssue(first)
    }),
  )
  return list
}

/** `repeat: {times, template | sequence, continue_on_failure}`, alone in its step. */
function repeatSchema(z: Zod, template: ReturnType<typeof templateSchema>, sequence: () => StepList) {
  const times = says((v) => `${show(v)} is not a whole number from 1 to ${MAX_REPEAT_TIMES}`, TIMES_FIX)
  const cof = says((v) => `${show(v)} is not true or false`, COF_FIX)
  const body = z.strictObject(
    {
      times: z.int(times).check(z.gte(1, times), z.lte(MAX_REPEAT_TIMES, times)),
      template: z.optional(template),
      get sequence() {
        return z.optional(sequence())
      },
      continue_on_failure: z.optional(z.boolean(cof)),
    },
    saysBy((_, issue) =>
      issue.code === 'invalid_type'
        ? {problem: 'is not a mapping', fix: 'write repeat: {times: 3, template: "echo {iteration}"}'}
        : unknownKey(issue, 'is not a repeat field', ['times', 'template', 'sequence', 'continue_on_failure']),
    ),
  )
  const repeat = z.pipe(
    body,
    z.transform(({times, template, sequence, continue_on_failure}, ctx): RepeatStep['repeat'] => {
      if ((template === undefined) === (sequence === undefined))
        refuse(ctx, {
          problem: template !== undefined ? 'has both template and sequence' : 'has neither template nor sequence',
          fix: 'give exactly one body: template: ... or sequence: [...]',
        })
      const out = {times, continue_on_failure: continue_on_failure === true}
      return template !== undefined ? {...out, template} : {...out, sequence}
    }),
  )
  return z.strictObject(
    {repeat},
    saysBy((_, issue) =>
      issue.code === 'unrecognized_keys'
        ? {
            at: ['repeat'],
            problem: `cannot stand beside "${issue.keys?.[0]}" in one step`,
            fix: 'put times, template or sequence and continue_on_failure inside repeat: {...}',
          }
        : undefined,
    ),
  )
}

/** A `use: RECIPE` step with its `with:` values (which Recipe it names is use.ts's to check). */
function useSchema(z: Zod, scalar: ReturnType<Zod['union']>) {
  const value = says(
    (v) => `${show(v)} is not a string, number, bool or list of them`,
    'write a plain value, e.g. name: world',
  )
  return z.pipe(
    z.strictObject(
      {
        use: z.string(says(USE_NAME.problem, USE_NAME.fix)),
        with: z.optional(
          z.nullable(
            z.record(
              z.string(),
              z.union([scalar, z.array(scalar)], value),
              says('is not a mapping of arg names to values', 'write with: {name: value}'),
            ),
          ),
        ),
      },
      saysBy((_, issue) => unknownKey(issue, 'is not a use field', ['use', 'with'])),
    ),
    z.transform((step, ctx) => {
      if (step.use.trim() === '') refuse(ctx, USE_NAME)
      const given = (step.with ?? {}) as Record<string, unknown>
      const bad = Object.keys(given).find((name) => !ARG_NAME.test(name))
      if (bad !== undefined)
        refuse(ctx, {
          at: ['with'],
          problem: `"${bad}" is not an arg name`,
          fix: 'use the used Recipe\'s arg names (letters, digits, "_")',
        })
      const values = Object.entries(given).map(([k, v]) => [k, Array.isArray(v) ? v.map(String) : String(v)])
      return {use: step.use.trim(), with: Object.fromEntries(values) as Record<string, string | string[]>}
    }),
  )
}

const USE_NAME: Said = {
  at: ['use'],
  problem: 'is not a Recipe name',
  fix: 'write use: NAME, a Recipe below the same root (e.g. use: hello)',
}
