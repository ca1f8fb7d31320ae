/**
 * Fork (SPEC: Trees, owners and limits): `actors run --fork[=N]` inside a Run
 * starts a child whose inbox begins with its parent's last N inbox messages
 * (all by default, oldest first), before any `send` can reach it, and whose
 * run.json (`seed`) and first Trace event (`runtime.seeded`) say where they
 * came from. The parent is the one the caller's unit shows (runs/lineage.ts),
 * never one the environment merely claims. The parent's records are copied as
 * data: only their message text is taken, into new records of the child.
 */
import {notActiveError, usageError} from '../../base/platform/errors.js'
import {generationOf} from '../../base/records/generation-layout.js'
import type {RunMeta, SeedRecord} from '../../base/records/run.js'
import {appendInboxRecords, MAX_INBOX_BYTES, MAX_INBOX_RECORDS, readInbox} from '../../kernel/runs/inbox.js'
import type {Lineage} from '../../kernel/runs/lineage.js'
import {readRunMetaRaw} from '../../kernel/runs/store.js'
import {appendTraceEvent} from '../../kernel/runs/trace.js'

/** How many of the parent's messages: the last N, or all of them. */
export type ForkRequest = number | 'all'

export interface ForkSeed {
  record: SeedRecord
  /** The message texts, oldest first. */
  messages: string[]
}

/**
 * A seed holds at most half the inbox journal's bounds (256 messages, 512 KiB
 * of text): the newest messages that fit, so a child whose parent's inbox is
 * full still starts within bounds, and its own later messages do not compact
 * the seed away at once. The parent's journal is read whole, which its own
 * bounds keep small (runs/inbox.ts).
 */
export const MAX_SEED_MESSAGES = MAX_INBOX_RECORDS / 2
export const MAX_SEED_BYTES = MAX_INBOX_BYTES / 2

/**
 * `--fork` alone ("all"), `--fork=N` (N from 1), or the MCP `run` tool's
 * `fork` (true or N); anything else is a usage error naming the value.
 */
export function parseForkFlag(value: string | number | boolean | undefined): ForkRequest | undefined {
  if (value === undefined || value === false) return undefined
  if (value === true || value === 'all') return 'all'
  const n = typeof value === 'number' ? value : /^\d+$/.test(value) ? Number(value) : Number.NaN
  if (Number.isSafeInteger(n) && n >= 1) return n
  throw usageError(
    `--fork=${JSON.stringify(String(value).slice(0, 80))} is not a positive whole number`,
    "--fork alone seeds all of the parent's inbox messages, --fork=N its last N (N from 1, e.g. --fork=3)",
  )
}

/** The seed of a child forked from the Run `lineage` shows as the caller's own; exit 2 outside a Run. */
export function forkSeed(lineage: Lineage, request: ForkRequest): ForkSeed {
  const parent = lineage.parent
  if (!parent) {
    throw usageError(
      "--fork works only inside a Run: it seeds the child with its parent Run's inbox, and this process runs in no Run",
      'drop --fork, or launch from a command a Run started, e.g. actors run --inbox file -- sh -c "actors run --fork -- reviewer"',
    )
  }
  if (!lineage.fromUnit) {
    throw usageError(
      `--fork needs the Run this process runs in, found from its unit; this process is in no Run's unit (only its environment names Run ${parent.run})`,
      'launch with --fork from a command the Run started, or drop --fork',
    )
  }
  const meta = readRunMetaRaw(parent.state_dir)
  if (!meta || meta.run_instance_id !== parent.run_instance_id)
    throw notActiveError(`Run ${parent.run} is no longer instance ${parent.run_instance_id}; nothing was launched`)
  const wanted = request === 'all' ? MAX_SEED_MESSAGES : Math.min(request, MAX_SEED_MESSAGES)
  const records = readInbox(parent.state_dir)
  const messages: string[] = []
  let bytes = 0
  let until: string | null = null
  // Newest first, until N, the count bound or the size bound stops it; kept oldest first.
  for (let i = records.length - 1; i >= 0 && messages.length < wanted; i--) {
    bytes += Buffer.byteLength(records[i].message)
    if (bytes > MAX_SEED_BYTES) break
    if (messages.length === 0) until = typeof records[i].id === 'string' ? records[i].id : null
    messages.unshift(records[i].message)
  }
  const record: SeedRecord = {
    from_run: parent.run,
    from_run_instance_id: parent.run_instance_id,
    from_generation: generationOf(meta),
    messages: messages.length,
    until_message_id: until,
  }
  return {record, messages}
}

/**
 * Give the new generation `meta` of a forked child its seed: the messages as
 * its first inbox records, then `runtime.seeded` in its Trace. Called under
 * the child's Run lock, once its run.json is written and before its
 * supervisor starts: a `send` needs that lock, so none can come first.
 */
export function seedChild(dir: string, meta: RunMeta, seed: ForkSeed): void {
  const generation = generationOf(meta)
  const via = meta.inbox === 'stdin' ? 'stdin' : 'inbox'
  appendInboxRecords(
    dir,
    seed.messages.map((message) => ({message, generation, via})),
  )
  const {record} = seed
  appendTraceEvent(dir, {
    kind: 'runtime.seeded',
    summary: `seeded with ${record.messages} inbox message(s) of Run ${record.from_run} (generation ${record.from_generation})`,
    data: record,
    run_instance_id: meta.run_instance_id,
  })
}
