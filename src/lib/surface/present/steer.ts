/** The plain faces of steering: `send`, `rerun`, `adopt` and the Run's own `inbox` (plain lines, or NDJSON records). */
import type {AdoptReply} from '../../services/steer/adopt.js'
import type {CloseReply} from '../../services/control/close.js'
import {messageLine, type InboxRecord} from '../../kernel/runs/inbox.js'
import type {NextGenerationResult} from '../../services/steer/next-generation.js'
import type {SendReply} from '../../services/steer/send.js'
import {documentResult, liveResult, type LiveResult, type TextSinks} from './result.js'
import {writeNdjson, writeOut} from './write.js'

/** `send`: how the message went on stderr, its id on stdout. */
export function plainSent(reply: SendReply, to: TextSinks): void {
  const how =
    reply.delivered === 'resumed'
      ? `resumed as generation ${reply.generation} (${reply.status})`
      : `delivered to its ${reply.delivered}${reply.written === false ? ' journal; not yet written to stdin' : ''}`
  to.note(`actors: ${reply.run}: message ${reply.message_id} ${how}\n`)
  to.out(`${reply.message_id}\n`)
}

/** `rerun`: the Run id on stdout, its new generation on stderr. */
export function plainRerun(started: NextGenerationResult, to: TextSinks): void {
  to.out(`${started.run}\n`)
  to.note(`actors: ${started.status} ${started.run} generation ${started.generation} in ${started.state_dir}\n`)
}

/** `adopt`: one line on stderr per adopted Run. */
export function plainAdopted(reply: AdoptReply, to: TextSinks): void {
  for (const a of reply.adopted)
    to.note(`actors: ${reply.parent} adopted ${a.run} (depth ${a.depth}, ${a.descendants} descendant(s))\n`)
}

/**
 * `inbox`: `take(print)` reads the unread records, hands them to `print`
 * before it moves the cursor, and returns them. Plain: one message a line as
 * they are taken; --json: the document {records} afterwards.
 */
export function inboxRecords(take: (print: (records: InboxRecord[]) => void) => InboxRecord[]): LiveResult {
  return liveResult({
    plain: async () => {
      take((records) => {
        for (const r of records) writeOut(messageLine(r.message) + '\n')
      })
      return undefined
    },
    json: async () => documentResult({records: take(() => {})}),
  })
}

/** `inbox --follow`: `follow(print)` hands new records to `print` until the Run ends; a line each, or an NDJSON record each. */
export function inboxFollow(follow: (print: (records: InboxRecord[]) => void) => Promise<void>): LiveResult {
  return liveResult({
    plain: async () => {
      await follow((records) => {
        for (const r of records) writeOut(messageLine(r.message) + '\n')
      })
      return undefined
    },
    json: async () => {
      await follow((records) => {
        for (const r of records) writeNdjson(r)
      })
      return undefined
    },
  })
}

/** `close`: the Run id on stdout, what happened on stderr. */
export function plainClosed(reply: CloseReply, to: TextSinks): void {
  to.out(`${reply.run}\n`)
  const how = reply.already_closed
    ? 'was already closed'
    : reply.stopped
      ? `stopped (${reply.status}) and closed`
      : `closed (${reply.status})`
  to.note(`actors: ${reply.run} ${how}; send, rerun and run --name of it are refused from now on\n`)
}
