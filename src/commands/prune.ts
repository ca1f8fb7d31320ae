import {Args, Flags} from '@oclif/core'
import {ActorsCommand} from '../base-command.js'
import {parseDuration} from '../lib/duration.js'
import {pruneExitCode, pruneRuns} from '../lib/prune.js'

export default class Prune extends ActorsCommand {
  static summary = 'Delete finished Runs (never a live one)'
  static description = 'Without RUN, every terminal Run (live ones are kept). A Run is deleted with all its generations; --earlier-generations deletes only the earlier ones (generations/<n>/) and keeps each Run\'s current generation, of live Runs too. A named Run that is not found exits 4; a named live Run is refused with exit 5; a damaged Run dir exits 1. The report lists what was pruned and what was kept, and why.'
  static examples = ['<%= config.bin %> prune', '<%= config.bin %> prune --older-than 7d', '<%= config.bin %> prune build-1 --keep-artifacts']
  static strict = false
  static args = {run: Args.string({description: 'Run ids or state dirs (default: every terminal Run)'})}
  static flags = {
    'older-than': Flags.string({description: 'only Runs that ended longer ago than this (e.g. 24h)'}),
    'keep-artifacts': Flags.boolean({description: 'copy artifacts stored inside a state dir to $ACTORS_HOME/artifacts/RUN first'}),
    'earlier-generations': Flags.boolean({description: "delete only earlier generations (generations/<n>/), keeping each Run's current one"}),
  }

  async run(): Promise<unknown> {
    const {argv, flags} = await this.parse(Prune)
    const report = pruneRuns(this.home(flags), {
      refs: argv as string[],
      olderThanMs: flags['older-than'] === undefined ? undefined : parseDuration(flags['older-than'], '--older-than'),
      keepArtifacts: flags['keep-artifacts'],
      earlierGenerations: flags['earlier-generations'],
    })
    if (!this.jsonEnabled()) {
      for (const id of report.pruned) process.stdout.write(`${id}\n`)
      for (const g of report.pruned_generations ?? []) process.stdout.write(`${g.generations.map((n) => `${g.run}@${n}`).join('\n')}\n`)
      for (const s of report.skipped) process.stderr.write(`actors: kept ${s.run}: ${s.reason}\n`)
      process.stderr.write(`actors: pruned ${report.pruned.length} Run(s)\n`)
    }
    process.exitCode = pruneExitCode(report)
    return report
  }
}
