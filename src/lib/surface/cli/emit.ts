/** `actors emit`: Trace events and token usage, reported from inside a Run. */
import {checkEmitInput, checkUsageInput, emitEvent, emitUsage, resolveEmitTarget} from '../../kernel/runs/emit.js'
import {resolveHome} from '../../base/platform/home.js'
import {plainEmitted, plainUsage} from '../present/emit.js'
import {documentResult} from '../present/result.js'
import {defineCommand} from './definition.js'

export const emitCommand = defineCommand({
  id: 'emit',
  summary: "Append an event to the current Run's Trace, or report token usage",
  description: 'Called from inside a Run: the Run is found through ACTORS_STATE_DIR / ACTORS_RUN_INSTANCE (or --run).',
  examples: [
    '<%= config.bin %> emit review.done --summary "3 findings" --data \'{"findings":3}\'',
    '<%= config.bin %> emit question --summary "which branch?" --attention followup',
    '<%= config.bin %> emit usage --tokens 1200',
  ],
  args: {kind: {description: 'event kind (lowercase dotted words) or "usage"', required: true}},
  flags: {
    summary: {type: 'string', description: 'one-line summary'},
    data: {type: 'string', description: 'JSON payload'},
    attention: {type: 'string', description: "notify | followup | steer (followup and steer wake the owner's wait)"},
    level: {type: 'string', description: 'info | warn | error'},
    tokens: {type: 'integer', description: 'usage: total tokens', min: 0},
    'prompt-tokens': {type: 'integer', description: 'usage: prompt tokens', min: 0},
    'completion-tokens': {type: 'integer', description: 'usage: completion tokens', min: 0},
    run: {type: 'string', description: 'target Run (default: the Run this command runs in)'},
  },

  async run({args, flags}) {
    // Refused before the Run is even looked up: nothing of it is read or written.
    const input = {
      kind: args.kind!,
      summary: flags.summary,
      data: flags.data,
      attention: flags.attention,
      level: flags.level,
    }
    const tokens = {tokens: flags.tokens, prompt: flags['prompt-tokens'], completion: flags['completion-tokens']}
    if (args.kind === 'usage') checkUsageInput(tokens)
    else checkEmitInput(input)
    const target = resolveEmitTarget(resolveHome(flags.home), flags.run)
    if (args.kind === 'usage') {
      const {event, totals} = emitUsage(target, tokens)
      return documentResult({run: target.run, event, usage: totals}, plainUsage)
    }
    const event = emitEvent(target, input)
    return documentResult({run: target.run, event}, plainEmitted)
  },
})
