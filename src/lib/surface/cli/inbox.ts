/** `actors inbox`: inside a Run, the messages `actors send` left for it. */
import {resolveHome} from '../../base/platform/home.js'
import {followInbox, resolveInboxTarget, takeInbox} from '../../kernel/runs/inbox-reader.js'
import {inboxFollow, inboxRecords} from '../present/steer.js'
import {stdoutGone} from '../present/stdout-reader.js'
import {defineCommand} from './definition.js'

export const inboxCommand = defineCommand({
  id: 'inbox',
  summary: "Read this Run's messages (sent with `actors send`) from inside the Run",
  description: [
    'Prints the messages sent to this generation of the Run that it has not read yet, one a line (a message with line breaks as a JSON string), and moves its cursor past them.',
    '--all prints every record of the inbox without moving the cursor; --follow keeps printing new messages until the Run ends.',
    '--json prints {records: [...]}, or with --follow one record a line.',
  ].join(' '),
  examples: [
    '<%= config.bin %> inbox',
    '<%= config.bin %> inbox --follow | while read -r msg; do ...; done',
    '<%= config.bin %> inbox --all --json',
  ],
  args: {},
  flags: {
    follow: {type: 'boolean', char: 'f', description: 'keep printing new messages until the Run ends'},
    all: {type: 'boolean', description: 'every record of the inbox (all generations), without moving the cursor'},
  },

  async run({flags}) {
    const target = resolveInboxTarget(process.env, resolveHome(flags.home))
    if (flags.follow) {
      const stop = new AbortController()
      const end = () => stop.abort()
      process.once('SIGINT', end)
      process.once('SIGTERM', end)
      // A reader that went away (`inbox --follow | head -1`) ends the follow even while no message comes.
      const signal = AbortSignal.any([stop.signal, stdoutGone()])
      return inboxFollow((print) => followInbox(target, flags.all, print, signal))
    }
    return inboxRecords((print) => takeInbox(target, flags.all, print))
  },
})
