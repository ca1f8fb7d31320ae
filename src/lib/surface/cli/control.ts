/** `actors control`: runtime actions on a Run, or one of the actions its Recipe declares. */
import {controlRun} from '../../services/control/control.js'
import {resolveHome} from '../../base/platform/home.js'
import {checkActAuthority} from '../../kernel/runs/act-authority.js'
import {plainControlOutcome} from '../present/control.js'
import {documentResult} from '../present/result.js'
import {SERVICE_KINDS} from '../../services/music/service-kinds.js'
import {defineCommand} from './definition.js'

export const controlCommand = defineCommand({
  id: 'control',
  summary: 'Control a Run: pause, resume, stop, kill, interrupt, status, or one of its declared actions',
  description: [
    "pause/resume send SIGSTOP/SIGCONT to the Run's processes; stop sends SIGTERM to the whole tree and SIGKILL after kill_grace (result cancelled);",
    "kill sends SIGKILL at once (result killed); interrupt sends SIGINT to the command's process group (the Run stays live);",
    "status prints the kernel's view merged with the service's reply.",
    "Other actions must be declared by the Recipe (`control:`) and are delivered to the Run's service.",
  ].join(' '),
  examples: [
    '<%= config.bin %> control build-1 pause',
    '<%= config.bin %> control build-1 stop',
    '<%= config.bin %> control player-1 volume 40',
    '<%= config.bin %> control build-1 status --json',
  ],
  args: {
    run: {description: 'Run id or state dir', required: true},
    action: {description: 'pause, resume, stop, kill, interrupt, status, or a declared action', required: true},
    value: {description: 'value for a declared action (at most 4 KiB)'},
  },
  flags: {},

  async run({args, flags}) {
    checkActAuthority(resolveHome(flags.home), args.run!, 'control')
    // stop/kill end descendant Runs first (controlRun → tree/cascade.ts), reported as `descendants`.
    return documentResult(
      await controlRun(resolveHome(flags.home), args.run!, args.action!, args.value, SERVICE_KINDS),
      plainControlOutcome,
    )
  },
})
