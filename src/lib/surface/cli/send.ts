/** `actors send`: steer a live Run through its inbox, or resume a finished one with a message. */
import {readSync} from 'node:fs'
import {sleepSync} from '../../base/platform/sleep.js'
import {usageError} from '../../base/platform/errors.js'
import {resolveHome} from '../../base/platform/home.js'
import {checkActAuthority} from '../../kernel/runs/act-authority.js'
import {MAX_MESSAGE_BYTES} from '../../kernel/runs/inbox.js'
import {sendMessage} from '../../services/steer/send.js'
import {documentResult} from '../present/result.js'
import {plainSent} from '../present/steer.js'
import {defineCommand} from './definition.js'

export const sendCommand = defineCommand({
  id: 'send',
  summary: 'Send a message to a Run: steer it while it runs, or resume it when it has finished',
  description: [
    'A live Run with inbox: stdin gets the message as one line on its stdin; with inbox: file it is appended to its inbox.jsonl (read with `actors inbox`).',
    'A live Run without an inbox is refused (exit 3). A finished Run is resumed as its next generation with ACTORS_MESSAGE set (refused with exit 3 when its Recipe says resume: false).',
    'MESSAGE is at most 64 KiB; "-" reads it from stdin.',
  ].join(' '),
  examples: [
    '<%= config.bin %> send worker-1 "focus on the failing test"',
    '<%= config.bin %> send review-2 "now check the docs" --json',
    'git diff | <%= config.bin %> send reviewer -',
  ],
  args: {
    run: {description: 'Run id or state dir', required: true},
    message: {description: 'the message ("-": read stdin)', required: true},
  },
  flags: {},

  async run({args, flags}) {
    checkActAuthority(resolveHome(flags.home), args.run!, 'send to')
    const message = args.message === '-' ? readStdinMessage() : args.message!
    return documentResult(await sendMessage(resolveHome(flags.home), args.run!, message), plainSent)
  },
})

/** The message from stdin, refused when over the limit (read one byte more than allowed to tell, never the rest). */
function readStdinMessage(): string {
  let bytes: Buffer
  try {
    bytes = readStdinUpTo(MAX_MESSAGE_BYTES + 1)
  } catch (error) {
    throw usageError(
      `cannot read the message from stdin (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`,
      'pipe the message in, or pass it as an argument',
    )
  }
  if (bytes.length > MAX_MESSAGE_BYTES)
    throw usageError(
      `the message is over the 64 KiB limit (${MAX_MESSAGE_BYTES} bytes)`,
      'put large content in a file and send its path',
    )
  return bytes.toString('utf8').replace(/\n$/, '')
}

/** Up to `limit` bytes of stdin, fewer at its end (a 200 MB pipe used to be read whole before it was refused). */
function readStdinUpTo(limit: number): Buffer {
  const buffer = Buffer.alloc(limit)
  let length = 0
  while (length < limit) {
    let read: number
    try {
      read = readSync(0, buffer, length, limit - length, null)
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code
      if (code === 'EOF') break
      if (code !== 'EAGAIN') throw error
      sleepSync(5) // a non-blocking pipe with nothing in it yet
      continue
    }
    if (read === 0) break
    length += read
  }
  return buffer.subarray(0, length)
}
