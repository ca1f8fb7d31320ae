/** `actors recipes [NAME]` and `actors recipes validate PATH...`. */
import {EXIT} from '../errors.js'
import {resolveHome} from '../home.js'
import {formatTable} from '../output.js'
import {recipesDocument} from '../recipes/document.js'
import {formatDescription, validateRecipeFiles} from '../recipes/index.js'
import {defineCommand} from './definition.js'

export const recipesCommand = defineCommand({
  id: 'recipes',
  summary: 'List the available Recipes, or show one',
  description: 'Roots, first match wins: --recipes DIR, $ACTORS_RECIPES, ./recipes, $ACTORS_HOME/recipes, the shipped library.',
  examples: ['<%= config.bin %> recipes', '<%= config.bin %> recipes hello', '<%= config.bin %> recipes --json | jq -r ".recipes[].name"'],
  args: {name: {description: 'a Recipe name (e.g. music/playback) or a path to a Recipe file'}},
  flags: {recipes: {type: 'string', description: 'search this recipe directory first'}},

  async run({args, flags, json}) {
    const doc = recipesDocument(resolveHome(flags.home), {name: args.name, recipesFlag: flags.recipes})
    if ('name' in doc) {
      if (!json) process.stdout.write(`${formatDescription(doc)}\n`)
      return doc
    }
    if (!json) {
      const rows = doc.recipes.map((r) => [r.name, r.args.join(' ') || '-', r.error ? `BROKEN: ${r.error}` : r.description || '-'])
      if (rows.length) process.stdout.write(`${formatTable(['RECIPE', 'ARGS', 'DESCRIPTION'], rows)}\n`)
      else process.stderr.write('actors: no Recipes found (add YAML files to ./recipes or pass --recipes DIR)\n')
    }
    return doc
  },
})

export const recipesValidateCommand = defineCommand({
  id: 'recipes:validate',
  summary: 'Check Recipe files (exit 2 if any is invalid)',
  examples: ['<%= config.bin %> recipes validate recipes/*.yaml', '<%= config.bin %> recipes validate recipes/'],
  strict: false,
  args: {path: {description: 'Recipe files or directories holding them', required: true}},
  flags: {},

  async run({argv, json}) {
    const files = validateRecipeFiles(argv)
    const ok = files.length > 0 && files.every((f) => f.ok)
    if (!json) {
      for (const f of files) {
        if (f.ok) process.stdout.write(`ok       ${f.file}\n`)
        else {
          process.stdout.write(`invalid  ${f.file}\n`)
          process.stderr.write(`actors: ${f.error}\n${f.fix ? `  fix: ${f.fix}\n` : ''}`)
        }
      }
      if (files.length === 0) process.stderr.write('actors: no Recipe files found (.yaml, .yml, .json)\n')
    }
    if (!ok) process.exitCode = EXIT.usage
    return {ok, files}
  },
})
