/** `actors wait`: block until Runs are terminal, then print one completion batch. */
import {parseDuration} from '../../base/platform/duration.js'
import {resolveHome, resolveRunRef, runDir} from '../../base/platform/home.js'
import {refuseLinkedDir} from '../../base/platform/private-files.js'
import {callerLineage, treeOwner} from '../../kernel/runs/lineage.js'
import {waitResult} from '../present/wait.js'
import {defineCommand} from './definition.js'

export const waitCommand = defineCommand({
  id: 'wait',
  summary: 'Block until Runs are terminal, then print one completion batch',
  description:
    'Default: every unreported Run of the current owner (ACTORS_OWNER, default "default"); inside a Run, its descendants, for the owner of its tree. ' +
    'Members are marked reported once printed, so the next wait never repeats them. ' +
    'Ends within one settle window (--settle, default 200ms) of each other come in one batch, --any included. ' +
    'A Run ended by `actors control RUN stop|kill` from outside its tree is counted (counts, stopped_runs) but gets no row unless named. ' +
    'Exit 0; 1 when a member with a row failed, was killed or exited; 124 on timeout with nothing ready; 4 when every RUN is unknown.',
  examples: [
    '<%= config.bin %> wait',
    '<%= config.bin %> wait build-1 test-2 --json',
    '<%= config.bin %> wait --any --timeout 30s',
    '<%= config.bin %> wait --any --settle 1s',
  ],
  strict: false,
  args: {run: {description: 'Run ids or state dirs to wait for (default: all unreported Runs of the owner)'}},
  flags: {
    any: {type: 'boolean', description: 'return once at least one Run is terminal'},
    timeout: {type: 'string', description: 'give up after this long (500ms, 30s, 5m); exit 124 when nothing was ready'},
    settle: {
      type: 'string',
      description:
        'ends this close together come in one batch (default 200ms; 0: none); a batch waits at most 5 windows for more',
    },
  },

  async run({argv, flags}) {
    const home = resolveHome(flags.home)
    const lineage = callerLineage(home)
    const request = {
      home,
      // Inside a Run: its tree's owner (the one its children were launched for), whatever ACTORS_OWNER says.
      owner: treeOwner(home, lineage),
      ids: argv.length > 0 ? [...new Set(argv.map((ref) => resolveRunRef(home, ref)))] : undefined,
      any: flags.any,
      timeoutMs: flags.timeout === undefined ? undefined : parseDuration(flags.timeout, '--timeout'),
      settleMs: flags.settle === undefined ? undefined : parseDuration(flags.settle, '--settle'),
      scope: lineage.parent,
      collector: lineage.parent,
    }
    // A link in a named Run's state dir place is damage (exit 1), never waited on through.
    for (const id of request.ids ?? []) refuseLinkedDir(runDir(home, id))
    // On a TTY: pending Runs live, then the completion card (Ink); otherwise the plain card or JSON.
    return waitResult(request, {timeout: flags.timeout})
  },
})
