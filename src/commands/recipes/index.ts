import {Args, Flags} from '@oclif/core'
import {ActorsCommand} from '../../base-command.js'
import {formatTable} from '../../lib/output.js'
import {formatDescription} from '../../lib/recipes/index.js'
import {recipesDocument} from '../../lib/recipes/document.js'

export default class Recipes extends ActorsCommand {
  static summary = 'List the available Recipes, or show one'
  static description = 'Roots, first match wins: --recipes DIR, $ACTORS_RECIPES, ./recipes, $ACTORS_HOME/recipes, the shipped library.'
  static examples = ['<%= config.bin %> recipes', '<%= config.bin %> recipes hello', '<%= config.bin %> recipes --json | jq -r ".recipes[].name"']
  static args = {name: Args.string({description: 'a Recipe name (e.g. music/playback) or a path to a Recipe file'})}
  static flags = {recipes: Flags.string({description: 'search this recipe directory first'})}

  async run(): Promise<unknown> {
    const {args, flags} = await this.parse(Recipes)
    const doc = recipesDocument(this.home(flags), {name: args.name, recipesFlag: flags.recipes})
    if ('name' in doc) {
      if (!this.jsonEnabled()) process.stdout.write(`${formatDescription(doc)}\n`)
      return doc
    }
    const {recipes} = doc
    if (!this.jsonEnabled()) {
      const rows = recipes.map((r) => [r.name, r.args.join(' ') || '-', r.error ? `BROKEN: ${r.error}` : r.description || '-'])
      if (rows.length) process.stdout.write(`${formatTable(['RECIPE', 'ARGS', 'DESCRIPTION'], rows)}\n`)
      else process.stderr.write('actors: no Recipes found (add YAML files to ./recipes or pass --recipes DIR)\n')
    }
    return doc
  }
}
