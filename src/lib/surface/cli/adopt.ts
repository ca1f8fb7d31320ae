/** `actors adopt`: make top-level Runs children of a Run. */
import {resolveHome} from '../../base/platform/home.js'
import {checkActAuthority} from '../../kernel/runs/act-authority.js'
import {adoptRuns} from '../../services/steer/adopt.js'
import {documentResult} from '../present/result.js'
import {plainAdopted} from '../present/steer.js'
import {defineCommand} from './definition.js'

export const adoptCommand = defineCommand({
  id: 'adopt',
  summary: 'Make top-level Runs of the same owner children of a Run (the Run this runs in, or --parent)',
  description:
    "Lineage, root and depth are rewritten for each whole moved subtree, within ACTORS_MAX_DEPTH (exit 5), the parent's --max-parallel (exit 5) and its tree's budget (exit 5). A Run that already has a parent is refused (exit 3).",
  examples: [
    '<%= config.bin %> adopt worker-1 worker-2 --parent coordinator',
    '<%= config.bin %> adopt helper-7   # from inside the adopting Run',
  ],
  strict: false,
  args: {run: {description: 'Run ids or state dirs to adopt', required: true}},
  flags: {parent: {type: 'string', description: 'the adopting Run (default: the Run this command runs in)'}},

  async run({argv, flags}) {
    for (const ref of argv) if (!ref.startsWith('-')) checkActAuthority(resolveHome(flags.home), ref, 'adopt')
    return documentResult(adoptRuns(resolveHome(flags.home), argv, flags.parent), plainAdopted)
  },
})
