/** `actors recipes [NAME]` and `actors recipes validate PATH...`. */
import {EXIT} from '../../base/platform/errors.js'
import {resolveHome} from '../../base/platform/home.js'
import {recipesDocument} from '../../kernel/recipes/document.js'
import {recipeJsonSchema, validateRecipeFiles} from '../../kernel/recipes/index.js'
import {plainRecipes, plainValidated} from '../present/recipes.js'
import {documentResult} from '../present/result.js'
import {defineCommand} from './definition.js'

export const recipesCommand = defineCommand({
  id: 'recipes',
  summary: 'List the available Recipes, or show one',
  description:
    'Roots, first match wins: --recipes DIR, $ACTORS_RECIPES, ./recipes, $ACTORS_HOME/recipes, the shipped library.',
  examples: [
    '<%= config.bin %> recipes',
    '<%= config.bin %> recipes hello',
    '<%= config.bin %> recipes --json | jq -r ".recipes[].name"',
    '<%= config.bin %> recipes --schema > recipe.schema.json',
  ],
  args: {name: {description: 'a Recipe name (e.g. music/playback) or a path to a Recipe file'}},
  flags: {
    recipes: {type: 'string', description: 'search this recipe directory first'},
    schema: {
      type: 'boolean',
      description: "print the JSON Schema of a Recipe file (for an editor's YAML language server)",
    },
  },

  async run({args, flags}) {
    if (flags.schema) return documentResult(recipeJsonSchema(), (schema, to) => to.json(schema))
    return documentResult(
      recipesDocument(resolveHome(flags.home), {name: args.name, recipesFlag: flags.recipes}),
      plainRecipes,
    )
  },
})

export const recipesValidateCommand = defineCommand({
  id: 'recipes:validate',
  summary: 'Check Recipe files (exit 2 if any is invalid)',
  examples: ['<%= config.bin %> recipes validate recipes/*.yaml', '<%= config.bin %> recipes validate recipes/'],
  strict: false,
  args: {path: {description: 'Recipe files or directories holding them', required: true}},
  flags: {},

  async run({argv}) {
    const files = validateRecipeFiles(argv)
    const ok = files.length > 0 && files.every((f) => f.ok)
    return documentResult({ok, files}, plainValidated, {exitCode: ok ? undefined : EXIT.usage})
  },
})
