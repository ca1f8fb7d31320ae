/** `actors prune`: delete finished Runs, never a live one. */
import {parseDuration} from '../../base/platform/duration.js'
import {resolveHome} from '../../base/platform/home.js'
import {pruneExitCode, pruneRuns} from '../../kernel/history/prune.js'
import {plainPruned} from '../present/prune.js'
import {documentResult} from '../present/result.js'
import {defineCommand} from './definition.js'

export const pruneCommand = defineCommand({
  id: 'prune',
  summary: 'Delete finished Runs (never a live one)',
  description:
    "Without RUN, every terminal Run (live ones are kept). A Run is deleted with all its generations; --earlier-generations deletes only the earlier ones (generations/<n>/) and keeps each Run's current generation, of live Runs too. A named Run that is not found exits 4; a named live Run is refused with exit 5; a damaged Run dir exits 1. The report lists what was pruned and what was kept, and why.",
  examples: [
    '<%= config.bin %> prune',
    '<%= config.bin %> prune --older-than 7d',
    '<%= config.bin %> prune build-1 --keep-artifacts',
  ],
  strict: false,
  args: {run: {description: 'Run ids or state dirs (default: every terminal Run)'}},
  flags: {
    'older-than': {type: 'string', description: 'only Runs that ended longer ago than this (e.g. 24h)'},
    'keep-artifacts': {
      type: 'boolean',
      description: 'copy artifacts stored inside a state dir to $ACTORS_HOME/artifacts/RUN first',
    },
    'earlier-generations': {
      type: 'boolean',
      description: "delete only earlier generations (generations/<n>/), keeping each Run's current one",
    },
  },

  async run({argv, flags}) {
    const report = pruneRuns(resolveHome(flags.home), {
      refs: argv,
      olderThanMs: flags['older-than'] === undefined ? undefined : parseDuration(flags['older-than'], '--older-than'),
      keepArtifacts: flags['keep-artifacts'],
      earlierGenerations: flags['earlier-generations'],
    })
    return documentResult(report, plainPruned, {exitCode: pruneExitCode(report)})
  },
})
