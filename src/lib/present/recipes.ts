/** The plain faces of `actors recipes`: the table of Recipes, one Recipe described, and `recipes validate`'s verdicts. */
import type {RecipesDocument} from '../recipes/document.js'
import {formatDescription, type ValidationResult} from '../recipes/index.js'
import type {TextSinks} from './result.js'
import {formatTable} from './text.js'

/** `recipes [NAME]`. */
export function plainRecipes(doc: RecipesDocument, to: TextSinks): void {
  if ('name' in doc) {
    to.out(`${formatDescription(doc)}\n`)
    return
  }
  const rows = doc.recipes.map((r) => [r.name, r.args.join(' ') || '-', r.error ? `BROKEN: ${r.error}` : r.description || '-'])
  if (rows.length) to.out(`${formatTable(['RECIPE', 'ARGS', 'DESCRIPTION'], rows)}\n`)
  else to.note('actors: no Recipes found (add YAML files to ./recipes or pass --recipes DIR)\n')
}

/** `recipes validate`: ok/invalid per file on stdout, each problem on stderr. */
export function plainValidated(doc: {files: ValidationResult[]}, to: TextSinks): void {
  for (const f of doc.files) {
    if (f.ok) to.out(`ok       ${f.file}\n`)
    else {
      to.out(`invalid  ${f.file}\n`)
      to.note(`actors: ${f.error}\n${f.fix ? `  fix: ${f.fix}\n` : ''}`)
    }
  }
  if (doc.files.length === 0) to.note('actors: no Recipe files found (.yaml, .yml, .json)\n')
}
