/**
 * `actors send RUN MESSAGE` (SPEC: Generations and steering): steer a live
 * Run through its inbox (a line on its stdin, or a record in inbox.jsonl), or
 * resume a finished one as its next generation with the message.
 */
import {notActiveError, notFoundError} from '../../base/platform/errors.js'
import {refuseLinkedRuns, resolveRunRef, runDir, runsDir} from '../../base/platform/home.js'
import {refuseLinkedDir} from '../../base/platform/private-files.js'
import {isBeingCreated, retryWhenCreated} from '../../kernel/runs/abandoned.js'
import {withLockSync} from '../../base/platform/file-lock.js'
import {notifyStateChange} from '../../base/bell/notify.js'
import {readRunMetaRaw, readRunResult, readRunState, runFile} from '../../kernel/runs/store.js'
import {isTerminal, type PolicyRule, type RunMeta} from '../../base/records/run.js'
import {traceQuietly} from '../../kernel/runs/trace.js'
import {watchUntil} from '../../base/bell/watch-until.js'
import {generationOf} from '../../base/records/generation-layout.js'
import {appendInboxRecord, readStdinAck, validateMessage, type InboxRecord} from '../../kernel/runs/inbox.js'
import {startNextGeneration} from './next-generation.js'
import {refuseClosed} from '../../kernel/runs/closed.js'

/** How long `send` waits for the supervisor to write a stdin message. */
const STDIN_ACK_MS = 5000

export interface SendReply {
  run: string
  generation: number
  message_id: string
  delivered: 'stdin' | 'inbox' | 'resumed'
  run_instance_id?: string
  status?: string
  /** stdin: whether the supervisor wrote the line within 5 s (it stays journaled either way). */
  written?: boolean
}

/** Deliver `message` to the Run `ref`, or resume it; see the module comment. */
export async function sendMessage(
  home: string,
  ref: string,
  message: string,
  policy?: PolicyRule[],
): Promise<SendReply> {
  validateMessage(message)
  const id = resolveRunRef(home, ref)
  const dir = runDir(home, id)
  refuseLinkedRuns(home)
  refuseLinkedDir(dir)
  const state = readRunState(dir)
  if (!state) {
    if (isBeingCreated(dir)) {
      throw notActiveError(`Run ${id} is being created by another launch`, `nothing was sent; ${retryWhenCreated(dir)}`)
    }
    throw notFoundError(`Run ${id} not found in ${runsDir(home)}`)
  }
  refuseClosed(state.meta) // closed: neither steered nor resumed (exit 5)
  const live = deliverToLive(dir, message)
  if (live) {
    const {meta, record} = live
    notifyStateChange(home)
    const reply: SendReply = {
      run: meta.run,
      generation: record.generation,
      message_id: record.id,
      delivered: meta.inbox === 'stdin' ? 'stdin' : 'inbox',
      run_instance_id: meta.run_instance_id,
    }
    // A queued Run's supervisor writes the line once it starts: nothing to wait for yet.
    if (meta.inbox === 'stdin' && meta.status === 'queued') reply.written = false
    else if (meta.inbox === 'stdin') {
      const ack = await watchUntil(
        dir,
        () => readStdinAck(dir, record.generation),
        (seq) => seq >= record.seq,
        {timeoutMs: STDIN_ACK_MS, pollMs: 200},
      )
      reply.written = ack >= record.seq
    }
    return reply
  }
  const finished = readRunState(dir)!
  if (finished.meta.resume === false) {
    throw notActiveError(
      `Run ${id} is ${finished.meta.status} and its Recipe says resume: false; nothing was sent`,
      `start it again without a message (actors rerun ${id}), or launch a new Run`,
    )
  }
  const started = startNextGeneration(home, finished, {message, policy})
  return {
    run: started.run,
    generation: started.generation,
    run_instance_id: started.run_instance_id,
    message_id: started.message_id!,
    delivered: 'resumed',
    status: started.status,
  }
}

/**
 * Journal the message for the live Run in `dir` under the Run's lock (so it
 * cannot end or start another generation in between). Returns undefined when
 * the Run is finished; refuses a live Run without an inbox (exit 3).
 */
function deliverToLive(dir: string, message: string): {meta: RunMeta; record: InboxRecord} | undefined {
  return withLockSync(runFile(dir, 'lock'), () => {
    const meta = readRunMetaRaw(dir)
    if (!meta) throw notActiveError(`no Run in ${dir}`)
    if (isTerminal(meta.status) || readRunResult(dir, meta)) return undefined
    if (!meta.inbox) {
      throw notActiveError(
        `Run ${meta.run} is ${meta.status} and not steerable: it has no inbox; nothing was sent`,
        `give its Recipe "inbox: stdin" or "inbox: file" (ad-hoc: actors run --inbox file -- ...); a finished Run can be resumed with send; stop it with actors control ${meta.run} stop`,
      )
    }
    const generation = generationOf(meta)
    const record = appendInboxRecord(dir, {message, generation, via: meta.inbox === 'stdin' ? 'stdin' : 'inbox'})
    traceQuietly(dir, meta, {
      kind: 'runtime.message',
      summary: `message ${record.id} (${record.via})`,
      data: {message_id: record.id, seq: record.seq, via: record.via, bytes: Buffer.byteLength(message)},
    })
    return {meta, record}
  })
}
