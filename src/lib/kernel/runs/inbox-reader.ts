/**
 * `actors inbox` inside a Run: the messages sent to this generation that it
 * has not read yet (or all records with --all), optionally following new
 * ones until the generation ends. The Run is found through the environment
 * its supervisor gave it; a process of an earlier generation is refused.
 */
import {resolveOwnRun} from './lineage.js'
import {readRunState} from './store.js'
import {isTerminal} from '../../base/records/run.js'
import {Doorbell} from '../../base/bell/doorbell.js'
import {generationOf} from '../../base/records/generation-layout.js'
import {saveCursor, unreadRecords, type InboxRecord} from './inbox.js'

export interface InboxTarget {
  dir: string
  run: string
  runInstanceId: string
  generation: number
}

/** The Run this process runs in, its unit first when `home` is given (exit 2 outside a Run, 3 for an earlier generation's process, 5 for a contradicting lineage). */
export function resolveInboxTarget(env: NodeJS.ProcessEnv = process.env, home?: string): InboxTarget {
  const {state, instance} = resolveOwnRun(
    {
      command: 'inbox',
      outsideFix: 'run it from a command started by `actors run --inbox file`, or a Recipe with inbox: file',
      staleFix: 'this process belongs to an earlier generation of the Run; its inbox reads are refused',
    },
    env,
    home,
  )
  return {dir: state.dir, run: state.meta.run, runInstanceId: instance, generation: generationOf(state.meta)}
}

/** Unread records (all with `all`); the cursor moves past them once `consume` returns. */
export function takeInbox(target: InboxTarget, all: boolean, consume: (records: InboxRecord[]) => void): InboxRecord[] {
  const {records, cursor} = unreadRecords(target.dir, target.generation, all)
  consume(records)
  if (!all && records.length > 0) saveCursor(target.dir, target.generation, cursor)
  return records
}

/** Keep handing new records to `consume` until this generation ends or `signal` aborts. */
export async function followInbox(
  target: InboxTarget,
  all: boolean,
  consume: (records: InboxRecord[]) => void,
  signal?: AbortSignal,
): Promise<void> {
  const bell = new Doorbell(target.dir, 1000)
  let first = true
  try {
    while (!signal?.aborted) {
      bell.clear()
      // --all prints every record once, then follows only new ones.
      takeInbox(target, all && first, consume)
      first = false
      let ended = false
      try {
        const state = readRunState(target.dir, {withResult: false})
        ended = !state || state.meta.run_instance_id !== target.runInstanceId || isTerminal(state.meta.status)
      } catch {
        ended = true
      }
      if (ended) return
      await bell.next(Infinity, signal)
    }
  } finally {
    bell.close()
  }
}
