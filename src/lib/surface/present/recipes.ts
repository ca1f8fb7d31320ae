/** The plain faces of `actors recipes`: the table of Recipes, one Recipe described, and `recipes validate`'s verdicts. */
import type {RecipesDocument} from '../../kernel/recipes/document.js'
import {formatValue} from '../../kernel/recipes/args.js'
import type {RecipeDescription} from '../../kernel/recipes/describe.js'
import type {ValidationResult} from '../../kernel/recipes/index.js'
import type {TextSinks} from './result.js'
import {screenWidth} from '../../base/platform/fit-width.js'
import {formatTable, inertText} from '../../base/platform/text.js'

/** `recipes [NAME]`. */
export function plainRecipes(doc: RecipesDocument, to: TextSinks): void {
  if ('name' in doc) {
    to.out(`${formatDescription(doc)}\n`)
    return
  }
  const rows = doc.recipes.map((r) => [
    r.name,
    r.args.join(' ') || '-',
    r.error ? `BROKEN: ${r.error}` : r.description || '-',
  ])
  if (rows.length)
    to.out(
      `${formatTable(['RECIPE', 'ARGS', 'DESCRIPTION'], rows, screenWidth(), {
        key: ['RECIPE'],
        free: ['ARGS', 'DESCRIPTION'],
      })}\n`,
    )
  else to.note('actors: no Recipes found (add YAML files to ./recipes or pass --recipes DIR)\n')
}

/** `recipes validate`: ok/invalid per file on stdout, each problem on stderr. */
export function plainValidated(doc: {files: ValidationResult[]}, to: TextSinks): void {
  for (const f of doc.files) {
    if (f.ok) to.out(`ok       ${inertText(f.file)}\n`)
    else {
      to.out(`invalid  ${inertText(f.file)}\n`)
      to.note(`actors: ${f.error}\n${f.fix ? `  fix: ${f.fix}\n` : ''}`)
    }
  }
  if (doc.files.length === 0) to.note('actors: no Recipe files found (.yaml, .yml, .json)\n')
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
  const width = Math.max(...lines.map(([k]) => inertText(k).length))
  // A Recipe file is anyone's text (a cloned repository's ./recipes): inert, its multi-line description kept as lines.
  return lines.map(([k, v]) => `${inertText(k).padEnd(width)}  ${inertText(v, {multiline: true})}`).join('\n')
}
