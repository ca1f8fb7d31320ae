import {Args, Flags} from '@oclif/core'
import {ActorsCommand} from '../base-command.js'
import {parseDuration} from '../lib/duration.js'
import {resolveRunRef} from '../lib/home.js'
import {lineageFromEnv} from '../lib/lineage.js'
import {waitAndShow} from '../lib/wait/print.js'

export default class Wait extends ActorsCommand {
  static summary = 'Block until Runs are terminal, then print one completion batch'
  static description =
    'Default: every unreported Run of the current owner (ACTORS_OWNER, default "default"); inside a Run, its descendants. ' +
    'Members are marked reported once printed, so the next wait never repeats them. ' +
    'Exit 0; 1 when a member failed, was killed or exited; 124 on timeout with nothing ready; 4 when every RUN is unknown.'
  static examples = [
    '<%= config.bin %> wait',
    '<%= config.bin %> wait build-1 test-2 --json',
    '<%= config.bin %> wait --any --timeout 30s',
  ]
  static strict = false
  static args = {run: Args.string({description: 'Run ids or state dirs to wait for (default: all unreported Runs of the owner)'})}
  static flags = {
    any: Flags.boolean({description: 'return once at least one Run is terminal'}),
    timeout: Flags.string({description: 'give up after this long (500ms, 30s, 5m); exit 124 when nothing was ready'}),
  }

  async run(): Promise<unknown> {
    const {argv, flags} = await this.parse(Wait)
    const home = this.home(flags)
    const refs = argv as string[]
    const lineage = lineageFromEnv()
    const json = this.jsonEnabled()
    const request = {
      home,
      owner: lineage.owner,
      ids: refs.length > 0 ? [...new Set(refs.map((ref) => resolveRunRef(home, ref)))] : undefined,
      any: flags.any,
      timeoutMs: flags.timeout === undefined ? undefined : parseDuration(flags.timeout, '--timeout'),
      scope: lineage.parent,
    }
    // On a TTY: pending Runs live, then the completion card (Ink); otherwise the plain card or JSON.
    const outcome = await waitAndShow(request, json)
    const doc = outcome.document
    if (outcome.exitCode === 4) process.stderr.write(`actors: no Run ${doc.unknown.join(', ')} of owner ${doc.owner}\n  fix: list Runs with \`actors inspect\`\n`)
    if (outcome.exitCode === 124) process.stderr.write(`actors: timed out after ${flags.timeout} with nothing ready (${doc.pending_count} still live)\n`)
    process.exitCode = outcome.exitCode
    return undefined
  }
}
