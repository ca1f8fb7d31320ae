import {Args} from '@oclif/core'
import {ActorsCommand} from '../../base-command.js'
import {EXIT} from '../../lib/errors.js'
import {validateRecipeFiles} from '../../lib/recipes/index.js'

export default class RecipesValidate extends ActorsCommand {
  static summary = 'Check Recipe files (exit 2 if any is invalid)'
  static examples = ['<%= config.bin %> recipes validate recipes/*.yaml', '<%= config.bin %> recipes validate recipes/']
  static strict = false
  static args = {path: Args.string({description: 'Recipe files or directories holding them', required: true})}

  async run(): Promise<unknown> {
    const {argv} = await this.parse(RecipesValidate)
    const files = validateRecipeFiles(argv as string[])
    const ok = files.length > 0 && files.every((f) => f.ok)
    if (!this.jsonEnabled()) {
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
  }
}
