/**
 * The `lock` tool of `actors mcp` (SPEC: Agents over MCP, Resource locks):
 * `actors lock acquire|release|status` over MCP, with the CLI's `--json`
 * documents and exit codes.
 *
 * Who holds: the CLI's default holder is the calling process, but here the
 * caller is this server, which ends with the session and would free the slot
 * behind the agent's back. So acquire and release name a `holder` (acquire
 * also gives a `lease`), unless the server itself runs inside a Run: then that
 * Run holds, as `actors lock` does inside a Run, and its end frees the slot.
 */
import * as z from 'zod/v4'
import {parseDuration} from '../../base/platform/duration.js'
import {lockFreed} from '../../base/platform/file-lock.js'
import {usageError} from '../../base/platform/errors.js'
import {acquireLock, callerHolder, lockStatus, releaseLock, renewLockLease} from '../../kernel/locks/ops.js'
import {lockMutexFile, validateLockName, type HolderRef} from '../../base/records/lock.js'
import type {LockView} from '../../kernel/locks/views.js'
import {boundList} from './bound.js'
import {defineTool, durationInput, type ToolContext, type ToolOutcome} from './tool.js'

/** The longest a lock acquire blocks: below the 60 s after which common clients give up on a request (as `wait`). */
export const MAX_LOCK_WAIT = '45s'
const HEARTBEAT_MS = 5000

/** The holder a call acts for: the named `holder`, else the Run this server runs in; the server process itself never holds. */
function mcpHolder(home: string, holder: string | undefined, op: string): HolderRef {
  if (holder !== undefined) return callerHolder(home, holder)
  if (process.env.ACTORS_RUN && process.env.ACTORS_RUN_INSTANCE && process.env.ACTORS_STATE_DIR)
    return callerHolder(home, undefined)
  throw usageError(
    `lock ${op} over MCP needs a holder: this server process is not a durable holder (it ends with the session)`,
    `name one and give it a lease, e.g. {"op": "acquire", "name": "repo", "holder": "agent-7", "lease": "10m"}; release with the same holder`,
  )
}

function viewSummary(v: LockView): string {
  return `lock ${v.lock}: ${v.held}/${v.slots} held${v.holders.length ? ` by ${v.holders.map((h) => h.holder).join(', ')}` : ''}${v.queue.length ? `; ${v.queue.length} waiting` : ''}`
}

export const lockTool = defineTool({
  name: 'lock',
  title: 'Resource locks',
  description: [
    'Named resource locks shared with Runs and scripts (`actors lock`): acquire a slot, release it, or show status (holders, leases, queue).',
    'Use a lock to keep agents and Runs off the same resource (a repo checkout, a GPU, a deploy target).',
    'acquire, renew and release need a holder (a name you choose), and acquire a lease; renew it before it runs out (renew restarts it: lease, or the length it had).',
    'A holder is needed because this server process is not a durable holder. Busy without wait is a tool error with exit_code 5;',
    `wait queues for a slot, at most ${MAX_LOCK_WAIT} per call (longer asks are cut to it); running out is a tool error with exit_code 124, as in the CLI: call again.`,
  ].join(' '),
  input: () => ({
    op: z
      .enum(['acquire', 'release', 'renew', 'status'])
      .describe('acquire a slot, release it, renew its lease, or status (no name: every lock)'),
    name: z
      .string()
      .min(1)
      .max(128)
      .optional()
      .describe('lock name (letters, digits, "_", ".", ":" and "-"); required for acquire and release'),
    slots: z
      .number()
      .int()
      .min(1)
      .max(1024)
      .optional()
      .describe('acquire: capacity of the lock (default 1: a mutex); must match a lock in use'),
    lease: durationInput().optional().describe('acquire, renew: the slot expires after this long (e.g. 10m)'),
    wait: durationInput()
      .optional()
      .describe(
        `acquire: queue for a slot up to this long (at most ${MAX_LOCK_WAIT}); default: fail at once when busy`,
      ),
    holder: z
      .string()
      .min(1)
      .max(128)
      .optional()
      .describe('who holds the slot, e.g. agent-7 (letters, digits, "_", ".", ":" and "-")'),
  }),
  async call({op, name, slots, lease, wait, holder}, context) {
    if (op !== 'acquire' && (slots !== undefined || wait !== undefined || (lease !== undefined && op !== 'renew'))) {
      throw usageError(
        `slots and wait are for acquire (lease for acquire and renew), not ${op}`,
        `drop them, e.g. {"op": "${op}", "name": "repo"${op === 'release' ? ', "holder": "agent-7"' : ''}}`,
      )
    }
    if (op === 'status') {
      if (holder !== undefined)
        throw usageError(
          'holder is for acquire and release, not status',
          'status shows every holder: {"op": "status", "name": "repo"}',
        )
      const status = lockStatus(context.home, name)
      if ('locks' in status) {
        return {
          document: status,
          summary:
            `${status.locks.length} lock(s)${status.locks.length ? `: ${status.locks.map((v) => `${v.lock} ${v.held}/${v.slots}`).join(', ')}` : ''}` +
            (status.damaged.length ? `; damaged: ${status.damaged.map((d) => d.lock).join(', ')} (see damaged)` : ''),
          bound: (d, s) => boundList(d, 'locks', s, 'lock {op: "status", name} shows one lock'),
        }
      }
      return {document: status, summary: viewSummary(status)}
    }
    if (name === undefined)
      throw usageError(
        `lock ${op} needs a name`,
        `e.g. {"op": "${op}", "name": "repo", "holder": "agent-7"${op === 'acquire' ? ', "lease": "10m"' : ''}}`,
      )
    const ref = mcpHolder(context.home, holder, op)
    // The op takes the lock's mutex synchronously: wait for it here first, so the session's other calls go on
    // meanwhile (a Run keeping the mutex stalled the whole server for 30 s per call).
    await lockFreed(lockMutexFile(context.home, validateLockName(name)))
    if (op === 'release') {
      const reply = releaseLock(context.home, name, ref)
      return {
        document: reply,
        summary: `${reply.holder} released lock ${reply.lock} (${reply.held}/${reply.slots} now held)`,
      }
    }
    if (op === 'renew') {
      const reply = renewLockLease(
        context.home,
        name,
        ref,
        lease === undefined ? undefined : parseDuration(lease, 'lease'),
      )
      return {
        document: reply,
        summary: `${reply.holder} renewed lock ${reply.lock} (lease until ${reply.lease_expires_at ?? 'none'})`,
      }
    }
    return acquireOverMcp(context, name, ref, {slots, lease, wait})
  },
})

/** `{"op": "acquire"}`: take a slot for `ref`, queueing up to `wait` (at most MAX_LOCK_WAIT) with heartbeats meanwhile. */
async function acquireOverMcp(
  context: ToolContext,
  name: string,
  ref: HolderRef,
  {slots, lease, wait}: {slots?: number; lease?: string; wait?: string},
): Promise<ToolOutcome> {
  if (ref.kind === 'named' && lease === undefined) {
    throw usageError(
      'lock acquire with a holder needs a lease',
      `a named holder has no process to watch: e.g. {"op": "acquire", "name": "${name}", "holder": "${ref.id}", "lease": "10m"}`,
    )
  }
  const waitMs =
    wait === undefined ? undefined : Math.min(parseDuration(wait, 'wait'), parseDuration(MAX_LOCK_WAIT, 'wait'))
  const started = Date.now()
  const beat = waitMs
    ? setInterval(
        () => context.heartbeat(Math.round((Date.now() - started) / 1000), `queued for lock ${name}`),
        HEARTBEAT_MS,
      )
    : undefined
  try {
    const reply = await acquireLock(context.home, {
      name,
      slots,
      leaseMs: lease === undefined ? undefined : parseDuration(lease, 'lease'),
      waitMs,
      holder: ref,
      stop: () => context.signal.aborted,
    })
    const verb = reply.already ? 'already holds' : 'holds'
    return {
      document: reply,
      summary: `${reply.holder} ${verb} lock ${reply.lock} (${reply.held}/${reply.slots}${reply.lease_expires_at ? `, lease until ${reply.lease_expires_at}` : ''})`,
    }
  } finally {
    clearInterval(beat)
  }
}
