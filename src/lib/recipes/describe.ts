/** One Recipe as a plain document for `actors recipes NAME` (JSON and text views alike). */
import {formatArgSpec, formatArgType, formatValue} from './args.js'
import {templateWords} from './load.js'
import type {Recipe} from './types.js'

export interface RecipeDescription {
  name: string
  file: string
  root: string
  description: string
  args: Array<{name: string; type: string; required: boolean; default?: unknown; spec: string}>
  plan: {mode: 'single' | 'sequence' | 'parallel'; steps: string[][]}
  timeout: string | number | null
  retry: number
  kill_grace: string | number | null
  cwd: string | null
  env: Record<string, string>
  control: string[]
  artifacts: Record<string, string>
  singleton: boolean
  notification: 'normal' | 'silent'
  /** How `actors send` steers the live Run, or null when it is not steerable. */
  inbox: 'stdin' | 'file' | null
  /** Whether `actors send` may resume the finished Run. */
  resume: boolean
}

/** Describe a loaded Recipe with its templates split into (unrendered) argv words. */
export function describeRecipe(recipe: Recipe): RecipeDescription {
  const steps = recipe.template !== undefined ? [recipe.template] : (recipe.sequence ?? recipe.parallel ?? [])
  return {
    name: recipe.name,
    file: recipe.file,
    root: recipe.root,
    description: recipe.description,
    args: recipe.args.map((a) => ({
      name: a.name,
      type: formatArgType(a.type),
      required: !('default' in a),
      ...('default' in a ? {default: a.default} : {}),
      spec: formatArgSpec(a),
    })),
    plan: {mode: recipe.template !== undefined ? 'single' : recipe.sequence ? 'sequence' : 'parallel', steps: steps.map(templateWords)},
    timeout: recipe.timeout ?? null,
    retry: recipe.retry ?? 1,
    kill_grace: recipe.kill_grace ?? null,
    cwd: recipe.cwd ?? null,
    env: recipe.env ?? {},
    control: recipe.control,
    artifacts: recipe.artifacts ?? {},
    singleton: recipe.singleton,
    notification: recipe.notification,
    inbox: recipe.inbox ?? null,
    resume: recipe.resume !== false,
  }
}

/** Quote an argv word for display only (never executed): bare when safe, else single-quoted. */
export function quoteWord(word: string): string {
  return /^[A-Za-z0-9_@%+=:,./{}-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`
}

/** The plain-text view of a description: aligned `key  value` lines. */
export function formatDescription(d: RecipeDescription): string {
  const lines: Array<[string, string]> = [
    ['name', d.name],
    ['file', d.file],
    ['description', d.description || '-'],
    ['args', d.args.length ? d.args.map((a) => a.spec).join('  ') : '-'],
  ]
  d.plan.steps.forEach((argv, i) => {
    const label = d.plan.mode === 'single' ? 'template' : `${d.plan.mode}[${i}]`
    lines.push([label, argv.map(quoteWord).join(' ')])
  })
  if (d.cwd) lines.push(['cwd', d.cwd])
  for (const [k, v] of Object.entries(d.env)) lines.push([`env.${k}`, v])
  if (d.timeout !== null) lines.push(['timeout', formatValue(d.timeout)])
  if (d.retry !== 1) lines.push(['retry', String(d.retry)])
  if (d.kill_grace !== null) lines.push(['kill_grace', formatValue(d.kill_grace)])
  if (d.control.length) lines.push(['control', d.control.join(', ')])
  for (const [k, v] of Object.entries(d.artifacts)) lines.push([`artifact.${k}`, v])
  if (d.singleton) lines.push(['singleton', 'true'])
  if (d.notification !== 'normal') lines.push(['notification', d.notification])
  if (d.inbox) lines.push(['inbox', d.inbox])
  if (!d.resume) lines.push(['resume', 'false'])
  const width = Math.max(...lines.map(([k]) => k.length))
  return lines.map(([k, v]) => `${k.padEnd(width)}  ${v}`).join('\n')
}
