/**
 * What the Recipe schema's issues say (kernel/recipes/schema.ts, steps.ts, locks-field.ts, and each
 * executor's options: kernel/executors/choice.ts). zod keeps one message per issue, so each message
 * packs what a refusal says: the problem, the fix, and where below the issue's path; recipeIssue()
 * reads it back, so a refusal still names the file, the field and a fix (kernel/recipes/load.ts).
 */
import {didYouMean} from './did-you-mean.js'

/** What an issue says: its problem and fix, and a field to name instead of its path, or keys below it. */
export interface Said {
  problem: string
  fix: string
  field?: string
  at?: Array<string | number>
  /** Name the field this many levels up (a lock's `slots` names the lock). */
  up?: number
}
export type Issue = {
  code: string
  input?: unknown
  path?: PropertyKey[]
  keys?: string[]
  errors?: Issue[][]
  message?: string
}
export type Ctx = {value: unknown; issues: unknown[]}

const said = (s: Said): string => JSON.stringify(s)
/** zod's `error` option: what each issue the schema itself raises says, made from the issue. */
export const saysBy = (what: (input: unknown, issue: Issue) => Said | undefined) => ({
  error: (issue: Issue) => {
    const s = what(issue.input, issue)
    return s && said(s)
  },
})
/** zod's `error` option for one problem (its text, or made from the refused value) and its fix. */
export const says = (problem: string | ((input: unknown) => string), fix: string, more: Partial<Said> = {}) =>
  saysBy((v) => ({...more, problem: typeof problem === 'string' ? problem : problem(v), fix}))
/** Add an issue from a refinement or transform: the value it refused, and what to say. */
export const refuse = (ctx: Ctx, s: Said) => ctx.issues.push({code: 'custom', input: ctx.value, message: said(s)})
/** Whether a parsed YAML/JSON value is a mapping. */
export const isMapping = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v)
/** What a strict mapping says of a key it does not take: `problem`, with the nearest allowed key. */
export const unknownKey = (issue: Issue, problem: string, allowed: readonly string[]): Said | undefined => {
  const key = issue.keys?.[0]
  if (issue.code !== 'unrecognized_keys' || key === undefined) return undefined
  return {problem, fix: `${didYouMean(key, allowed)}allowed: ${allowed.join(', ')}`, at: [key]}
}
/** A value as messages quote it. */
export const show = (v: unknown) => `${JSON.stringify(v)}`

/** What an issue of the schema says (issues zod raises without our message, if any, say it plainly). */
export function recipeIssue(issue: Issue): Said & {at: Array<string | number>} {
  let s: Said
  try {
    s = JSON.parse(issue.message ?? '')
  } catch {
    s = {problem: issue.message ?? 'is not valid', fix: 'see `actors recipes --schema` for the Recipe format'}
  }
  const path = (issue.path ?? []) as Array<string | number>
  return {...s, at: [...path.slice(0, path.length - (s.up ?? 0)), ...(s.at ?? [])]}
}

/** A field named as messages name it: `sequence[1].repeat.times`. */
export function fieldName(path: Array<string | number>): string {
  return path.map((p, i) => (typeof p === 'number' ? `[${p}]` : i === 0 ? p : `.${p}`)).join('')
}
