import {Args, Flags} from '@oclif/core'
import {ActorsCommand} from '../base-command.js'
import {emitEvent, emitUsage, resolveEmitTarget} from '../lib/emit.js'

export default class Emit extends ActorsCommand {
  static summary = "Append an event to the current Run's Trace, or report token usage"
  static description = 'Called from inside a Run: the Run is found through ACTORS_STATE_DIR / ACTORS_RUN_INSTANCE (or --run).'
  static examples = [
    '<%= config.bin %> emit review.done --summary "3 findings" --data \'{"findings":3}\'',
    '<%= config.bin %> emit question --summary "which branch?" --attention followup',
    '<%= config.bin %> emit usage --tokens 1200',
  ]
  static args = {kind: Args.string({description: 'event kind (lowercase dotted words) or "usage"', required: true})}
  static flags = {
    summary: Flags.string({description: 'one-line summary'}),
    data: Flags.string({description: 'JSON payload'}),
    attention: Flags.string({description: 'notify | followup | steer (followup and steer wake the owner\'s wait)'}),
    level: Flags.string({description: 'info | warn | error'}),
    tokens: Flags.integer({description: 'usage: total tokens', min: 0}),
    'prompt-tokens': Flags.integer({description: 'usage: prompt tokens', min: 0}),
    'completion-tokens': Flags.integer({description: 'usage: completion tokens', min: 0}),
    run: Flags.string({description: 'target Run (default: the Run this command runs in)'}),
  }

  async run(): Promise<unknown> {
    const {args, flags} = await this.parse(Emit)
    const target = resolveEmitTarget(this.home(flags), flags.run)
    if (args.kind === 'usage') {
      const {event, totals} = emitUsage(target, {tokens: flags.tokens, prompt: flags['prompt-tokens'], completion: flags['completion-tokens']})
      if (!this.jsonEnabled()) process.stderr.write(`actors: ${target.run} usage now ${totals.tokens} tokens\n`)
      return {run: target.run, event, usage: totals}
    }
    const event = emitEvent(target, {kind: args.kind, summary: flags.summary, data: flags.data, attention: flags.attention, level: flags.level})
    if (!this.jsonEnabled()) process.stdout.write(`${event.id}\n`)
    return {run: target.run, event}
  }
}
