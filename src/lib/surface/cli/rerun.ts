/** `actors rerun`: start a finished Run again as its next generation, with some values replaced. */
import {resolveHome, resolveRunRef} from '../../base/platform/home.js'
import {checkActAuthority} from '../../kernel/runs/act-authority.js'
import {requireRun} from '../../kernel/runs/store.js'
import {startNextGeneration} from '../../services/steer/next-generation.js'
import {documentResult} from '../present/result.js'
import {plainRerun} from '../present/steer.js'
import {defineCommand} from './definition.js'

export const rerunCommand = defineCommand({
  id: 'rerun',
  summary: 'Start a finished Run again as its next generation (NAME=VALUE replaces earlier values)',
  description:
    'Same Recipe, values, cwd and lineage as the last generation; values given are validated like a launch (exit 2, nothing started). A live Run is refused (exit 5). Returns {run, generation, run_instance_id, state_dir, status, pid}.',
  examples: ['<%= config.bin %> rerun build-1', '<%= config.bin %> rerun build-1 target=release --json'],
  strict: false,
  args: {run: {description: 'Run id or state dir, followed by NAME=VALUE arguments', required: true}},
  flags: {},

  async run({args, argv, flags}) {
    const home = resolveHome(flags.home)
    checkActAuthority(home, args.run!, 'rerun')
    const state = requireRun(home, resolveRunRef(home, args.run!))
    return documentResult(startNextGeneration(home, state, {assignments: argv.slice(1)}), plainRerun)
  },
})
