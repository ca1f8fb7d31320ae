/** `actors close`: retire a Run id (stop it when live), so no later send, rerun or run --name starts it again. */
import {closeRun} from '../../services/control/close.js'
import {SERVICE_KINDS} from '../../services/music/service-kinds.js'
import {resolveHome} from '../../base/platform/home.js'
import {checkActAuthority} from '../../kernel/runs/act-authority.js'
import {documentResult} from '../present/result.js'
import {plainClosed} from '../present/steer.js'
import {defineCommand} from './definition.js'

export const closeCommand = defineCommand({
  id: 'close',
  summary: 'Close a Run: stop it if live, then refuse any new generation or adoption of its id',
  description: [
    'A live Run is stopped first, as `actors control RUN stop` (its descendants too). Then run.json records closed: true and closed_at;',
    'send, rerun, run --name of that id and adopt are refused from then on (exit 5, "RUN is closed; start a new Run").',
    'inspect and logs still read it and prune may remove it. Closing a closed Run is exit 0 and changes nothing.',
    'Returns {run, generation, run_instance_id, status, closed, closed_at, stopped, already_closed}.',
  ].join(' '),
  examples: ['<%= config.bin %> close worker-1', '<%= config.bin %> close reviewer-2 --json'],
  args: {run: {description: 'Run id or state dir', required: true}},
  flags: {},

  async run({args, flags}) {
    checkActAuthority(resolveHome(flags.home), args.run!, 'close')
    return documentResult(await closeRun(resolveHome(flags.home), args.run!, SERVICE_KINDS), plainClosed)
  },
})
