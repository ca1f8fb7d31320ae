import {Args, Flags} from '@oclif/core'
import {ActorsCommand} from '../base-command.js'
import {resolveAdHoc} from '../lib/ad-hoc.js'
import {parseDuration} from '../lib/duration.js'
import {usageError} from '../lib/errors.js'
import {followToEnd} from '../lib/follow-output.js'
import type {LaunchResult} from '../lib/launch.js'
import {launchPrepared, type PreparedLaunch} from '../lib/run-launcher.js'
import {lineageFromEnv} from '../lib/lineage.js'
import {waitAndShow} from '../lib/wait/print.js'
import {findRecipe, recipeRoots, resolveRecipe} from '../lib/recipes/index.js'

export default class Run extends ActorsCommand {
  static summary = 'Launch a Recipe (or an ad-hoc command after --) as a supervised Run'
  static description = 'Returns once the Run is durable and started (or queued): {run, run_instance_id, state_dir, status, pid}.'
  static examples = [
    '<%= config.bin %> run demo',
    '<%= config.bin %> run hello name=world --json | jq -r .state_dir',
    '<%= config.bin %> run --name build -- make -j2',
  ]
  static strict = false
  static args = {recipe: Args.string({description: 'Recipe name (or path), followed by NAME=VALUE arguments', required: false})}
  static flags = {
    name: Flags.string({description: 'Run id (letters, digits, _ . -)'}),
    cwd: Flags.string({description: 'working directory of the command'}),
    timeout: Flags.string({description: 'end the Run after this long (500ms, 30s, 5m, 1h)'}),
    retry: Flags.integer({description: 'total attempts when the command fails', min: 1, max: 100}),
    silent: Flags.boolean({description: 'never report this Run in a completion batch'}),
    'max-parallel': Flags.integer({description: 'children of this Run running at once (more wait as queued)', min: 1}),
    'budget-tokens': Flags.integer({description: 'token budget for the whole tree rooted here', min: 1}),
    recipes: Flags.string({description: 'extra Recipe root searched first'}),
    wait: Flags.boolean({description: 'block until the Run ends, then print its completion batch'}),
    follow: Flags.boolean({description: 'stream the Run\'s output while it runs'}),
  }

  async run(): Promise<unknown> {
    const {args, argv, flags} = await this.parse(Run)
    const home = this.home(flags)
    const rest = (argv as string[]).slice(args.recipe === undefined ? 0 : 1)
    const adHoc = this.argv.includes('--') && this.argv.indexOf('--') <= this.argv.indexOf(args.recipe ?? '--')
    let prepared: PreparedLaunch
    if (adHoc) {
      const command = this.argv.slice(this.argv.indexOf('--') + 1)
      prepared = {idHint: command[0] ?? 'run', recipe: null, recipeFile: null, resolve: () => resolveAdHoc(command)}
    } else {
      if (args.recipe === undefined) throw usageError('missing Recipe name', 'actors run RECIPE [NAME=VALUE ...] or actors run -- COMMAND [ARG ...]; list Recipes with `actors recipes`')
      const recipe = findRecipe(args.recipe, recipeRoots({recipesFlag: flags.recipes, home}))
      prepared = {idHint: recipe.name, recipe: recipe.name, recipeFile: recipe.file, resolve: (runtime) => resolveRecipe(recipe, rest, runtime)}
    }
    const launched = launchPrepared(home, prepared, {
      name: flags.name,
      cwd: flags.cwd,
      timeoutMs: flags.timeout === undefined ? undefined : parseDuration(flags.timeout, '--timeout'),
      retry: flags.retry,
      silent: flags.silent,
      maxParallel: flags['max-parallel'],
      budgetTokens: flags['budget-tokens'],
    })
    return this.afterLaunch(home, launched, flags)
  }

  /** Print the launch, then follow or wait when asked. */
  private async afterLaunch(home: string, launched: LaunchResult, flags: {wait: boolean; follow: boolean}): Promise<unknown> {
    const json = this.jsonEnabled()
    if (flags.follow) {
      if (json) process.stdout.write(JSON.stringify({type: 'launched', ...launched}) + '\n')
      else process.stderr.write(`actors: started ${launched.run} (${launched.state_dir})\n`)
      // Interrupting the view stops following only; the Run keeps going.
      await followToEnd(launched.state_dir, {streams: ['stdout', 'stderr'], json, fromStart: true})
      return undefined
    }
    if (flags.wait) {
      // The same completion batch as `actors wait RUN`: printed once, then marked reported for the owner.
      if (!json) process.stderr.write(`actors: ${launched.status} ${launched.run}; waiting for it to end\n`)
      const request = {home, owner: lineageFromEnv().owner, ids: [launched.run], any: false}
      const outcome = await waitAndShow(request, json, {launched})
      process.exitCode = outcome.exitCode
      return undefined
    }
    if (!json) {
      process.stdout.write(`${launched.run}\n`)
      process.stderr.write(`actors: ${launched.status} ${launched.run} in ${launched.state_dir}\n`)
    }
    return launched
  }
}
