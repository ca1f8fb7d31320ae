/**
 * The steps that may stand wherever a template stands inside `sequence` and
 * `parallel` (SPEC: Recipes): a template, `repeat: {times, template |
 * sequence, continue_on_failure}` and `use: RECIPE` with `with:`. This
 * module reads their syntax; which Recipe a `use` names is checked by use.ts,
 * and rendering them into a plan is plan.ts's.
 */
import type {ActorsError} from '../platform/errors.js'
import {ARG_NAME} from './arg-name.js'
import {didYouMean} from '../platform/did-you-mean.js'
import {shellSplit} from '../platform/shell-split.js'

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
const REPEAT_FIELDS = ['times', 'template', 'sequence', 'continue_on_failure'] as const
const USE_FIELDS = ['use', 'with'] as const

type Fail = (field: string, problem: string, fix: string) => ActorsError

/** Whether a step is a `repeat`. */
export function isRepeat(step: Step): step is RepeatStep {
  return typeof step === 'object' && !Array.isArray(step) && 'repeat' in step
}

/** Whether a step is a `use`. */
export function isUse(step: Step): step is UseStep {
  return typeof step === 'object' && !Array.isArray(step) && 'use' in step
}

/** A template is a non-empty argv list or a string split like a shell; scalars in a list become strings. */
export function readTemplate(value: unknown, field: string, fail: Fail): Template {
  if (typeof value === 'string') {
    let words: string[]
    try {
      words = shellSplit(value)
    } catch (error) {
      throw fail(
        field,
        `cannot be split into words: ${(error as Error).message}`,
        'close every quote; or write the template as a list of argv words',
      )
    }
    if (words.length === 0) throw fail(field, 'is empty', 'give the command to run, e.g. echo hello')
    return value
  }
  if (Array.isArray(value)) {
    if (value.length === 0)
      throw fail(field, 'is an empty list', 'give the command and its arguments, e.g. [echo, hello]')
    return value.map((word) => {
      if (typeof word === 'string') return word
      if (typeof word === 'number' || typeof word === 'boolean') return String(word)
      throw fail(field, `word ${JSON.stringify(word)} is not a string`, 'write every argv word as a string')
    })
  }
  throw fail(field, 'is not a string or a list of strings', 'write template: echo hello, or template: [echo, hello]')
}

/** One entry of a `sequence`/`parallel` list (or of a repeat's `sequence`): a template, a repeat or a use. */
export function readStep(value: unknown, field: string, fail: Fail): Step {
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    const keys = Object.keys(value)
    if (keys.includes('repeat')) return readRepeat(value as Record<string, unknown>, `${field}.repeat`, fail)
    if (keys.includes('use')) return readUse(value as Record<string, unknown>, field, fail)
    throw fail(
      field,
      `is a mapping without repeat or use (keys: ${keys.join(', ') || 'none'})`,
      'write a template (echo hi), a repeat: {times: 3, template: ...} or a use: RECIPE step',
    )
  }
  return readTemplate(value, field, fail)
}

/** A list of steps (`sequence`, `parallel`, a repeat's `sequence`): non-empty. */
export function readStepList(value: unknown, field: string, fail: Fail): Step[] {
  if (!Array.isArray(value) || value.length === 0)
    throw fail(field, 'is not a non-empty list of templates', `write ${field}: followed by "- command ..." lines`)
  return value.map((step, i) => readStep(step, `${field}[${i}]`, fail))
}

function readRepeat(step: Record<string, unknown>, field: string, fail: Fail): RepeatStep {
  if (Object.keys(step).length !== 1) {
    const extra = Object.keys(step).find((k) => k !== 'repeat')
    throw fail(
      field,
      `cannot stand beside "${extra}" in one step`,
      'put times, template or sequence and continue_on_failure inside repeat: {...}',
    )
  }
  const body = step.repeat
  if (body === null || typeof body !== 'object' || Array.isArray(body))
    throw fail(field, 'is not a mapping', 'write repeat: {times: 3, template: "echo {iteration}"}')
  const spec = body as Record<string, unknown>
  for (const key of Object.keys(spec)) {
    if (!(REPEAT_FIELDS as readonly string[]).includes(key))
      throw fail(
        `${field}.${key}`,
        'is not a repeat field',
        `${didYouMean(key, REPEAT_FIELDS)}allowed: ${REPEAT_FIELDS.join(', ')}`,
      )
  }
  const times = spec.times
  if (typeof times !== 'number' || !Number.isInteger(times) || times < 1 || times > MAX_REPEAT_TIMES) {
    throw fail(
      `${field}.times`,
      `${JSON.stringify(times)} is not a whole number from 1 to ${MAX_REPEAT_TIMES}`,
      'give how many times the body runs, e.g. times: 3',
    )
  }
  const hasTemplate = spec.template !== undefined
  const hasSequence = spec.sequence !== undefined
  if (hasTemplate === hasSequence)
    throw fail(
      field,
      hasTemplate ? 'has both template and sequence' : 'has neither template nor sequence',
      'give exactly one body: template: ... or sequence: [...]',
    )
  const cof = spec.continue_on_failure
  if (cof !== undefined && typeof cof !== 'boolean')
    throw fail(
      `${field}.continue_on_failure`,
      `${JSON.stringify(cof)} is not true or false`,
      'write continue_on_failure: true to run every iteration even after one fails',
    )
  const repeat: RepeatStep['repeat'] = {times, continue_on_failure: cof === true}
  if (hasTemplate) repeat.template = readTemplate(spec.template, `${field}.template`, fail)
  else repeat.sequence = readStepList(spec.sequence, `${field}.sequence`, fail)
  return {repeat}
}

function readUse(step: Record<string, unknown>, field: string, fail: Fail): UseStep {
  for (const key of Object.keys(step)) {
    if (!(USE_FIELDS as readonly string[]).includes(key))
      throw fail(
        `${field}.${key}`,
        'is not a use field',
        `${didYouMean(key, USE_FIELDS)}allowed: ${USE_FIELDS.join(', ')}`,
      )
  }
  if (typeof step.use !== 'string' || step.use.trim() === '')
    throw fail(
      `${field}.use`,
      'is not a Recipe name',
      'write use: NAME, a Recipe below the same root (e.g. use: hello)',
    )
  const given = step.with ?? {}
  if (given === null || typeof given !== 'object' || Array.isArray(given))
    throw fail(`${field}.with`, 'is not a mapping of arg names to values', 'write with: {name: value}')
  const values: Record<string, string | string[]> = {}
  for (const [name, value] of Object.entries(given)) {
    if (!ARG_NAME.test(name))
      throw fail(
        `${field}.with`,
        `"${name}" is not an arg name`,
        'use the used Recipe\'s arg names (letters, digits, "_")',
      )
    const scalar = (v: unknown) =>
      typeof v === 'string' ? v : typeof v === 'number' || typeof v === 'boolean' ? String(v) : undefined
    const list = Array.isArray(value) ? value.map(scalar) : [scalar(value)]
    if (list.some((v) => v === undefined))
      throw fail(
        `${field}.with.${name}`,
        `${JSON.stringify(value)} is not a string, number, bool or list of them`,
        'write a plain value, e.g. name: world',
      )
    values[name] = Array.isArray(value) ? (list as string[]) : (list[0] as string)
  }
  return {use: step.use.trim(), with: values}
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
