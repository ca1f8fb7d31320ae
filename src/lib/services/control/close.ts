/**
 * `actors close RUN` (SPEC: Generations and steering): the coordinator
 * retires a participant. A live Run is stopped first, exactly as `control
 * stop` (its service first, descendants too); then, under the Run's lock and
 * only once it is terminal, run.json says `closed: true` and `closed_at`.
 * From then on no new generation starts and no adoption moves it
 * (runs/closed.ts). Closing a closed Run changes nothing and succeeds.
 */
import {isActorsError, notActiveError, EXIT} from '../../base/platform/errors.js'
import {resolveRunRef} from '../../base/platform/home.js'
import {notifyStateChange} from '../../base/bell/notify.js'
import {readRunResult, requireRun, runFile, writeRunMetaLocked, readRunMetaRaw} from '../../kernel/runs/store.js'
import {isTerminal, type RunMeta} from '../../base/records/run.js'
import {traceQuietly} from '../../kernel/runs/trace.js'
import {generationOf} from '../../base/records/generation-layout.js'
import {withLockSync} from '../../base/platform/file-lock.js'
import {sleep} from '../../base/platform/sleep.js'
import {livePidsOfEnded} from '../../kernel/containment/unit-facts.js'
import {controlRun} from './control.js'
import {endFirst} from './end-first.js'
import type {ServiceKind} from '../../kernel/signals/standalone.js'

export interface CloseReply {
  run: string
  generation: number
  run_instance_id: string
  status: string
  closed: true
  closed_at: string
  /** Whether this call stopped a live Run first. */
  stopped: boolean
  /** The Run was closed before this call (nothing changed). */
  already_closed: boolean
}

/** How many times a Run that became live again between the stop and the mark is stopped again. */
const STOP_ROUNDS = 3

/** Close the Run `ref`; see the module comment. Unknown Run: exit 4; a Run that will not end: exit 3. */
export async function closeRun(home: string, ref: string, services: readonly ServiceKind[]): Promise<CloseReply> {
  // A Run whose state dir would block the close has its unit ended first (end-first.ts).
  return endFirst(home, ref, 'close', () => closeLiveRun(home, ref, services))
}

async function closeLiveRun(home: string, ref: string, services: readonly ServiceKind[]): Promise<CloseReply> {
  const id = resolveRunRef(home, ref)
  let stopped = false
  for (let round = 0; round <= STOP_ROUNDS; round++) {
    const {dir, meta} = requireRun(home, id)
    // run.json is the Run's (and a neighbour's) to write: an end or a `closed` it claims while a process of its
    // unit lives is not one, and the Run is stopped first like any live Run (docs/containment.md).
    const claimsEnd = meta.closed === true || isTerminal(meta.status) || readRunResult(dir, meta) !== undefined
    const running = claimsEnd ? livePidsOfEnded(dir, meta) : []
    if (running.length === 0) {
      if (meta.closed === true) return reply(meta, stopped, !stopped)
      const marked = markClosedIfTerminal(dir)
      if (marked) {
        notifyStateChange(home)
        return reply(marked.meta, stopped, marked.already)
      }
    }
    if (round === STOP_ROUNDS) break
    try {
      await controlRun(home, id, 'stop', undefined, services)
      stopped = true
    } catch (error) {
      // It ended on its own between the read and the stop: mark it on the next round.
      if (!isActorsError(error) || error.exitCode !== EXIT.notActive) throw error
    }
    // A forged end's processes are killed, and its supervisor (spared) then records the real end: wait for it.
    if (running.length) await supervisorGone(dir, meta)
  }
  throw notActiveError(
    `Run ${id} did not end after stop; it was not closed`,
    `inspect it (actors inspect ${id}); end it with actors control ${id} kill, then close it again`,
  )
}

/** How long close waits for a Run stopped over a forged end to leave (its supervisor records the real end). */
const FORGED_END_WAIT_MS = 10_000

/** Resolves once nothing of the Run in `dir` lives, or after FORGED_END_WAIT_MS (the next round then stops it again). */
async function supervisorGone(dir: string, meta: RunMeta): Promise<void> {
  const deadline = Date.now() + FORGED_END_WAIT_MS
  while (livePidsOfEnded(dir, meta).length > 0 && Date.now() < deadline) await sleep(20)
}

/** Under the Run's lock: mark a terminal Run closed (or find it closed already); undefined while it is live. */
function markClosedIfTerminal(dir: string): {meta: RunMeta; already: boolean} | undefined {
  return withLockSync(runFile(dir, 'lock'), () => {
    const meta = readRunMetaRaw(dir)
    if (!meta) return undefined
    if (meta.closed === true) return {meta, already: true}
    const result = readRunResult(dir, meta)
    if (!isTerminal(meta.status) && !result) return undefined
    const closed: RunMeta = {...meta, closed: true, closed_at: new Date().toISOString()}
    writeRunMetaLocked(dir, closed)
    traceQuietly(dir, meta, {
      kind: 'runtime.closed',
      summary: 'closed: no new generation will start',
      data: {closed_at: closed.closed_at},
    })
    return {meta: closed, already: false}
  })
}

function reply(meta: RunMeta, stopped: boolean, already: boolean): CloseReply {
  return {
    run: meta.run,
    generation: generationOf(meta),
    run_instance_id: meta.run_instance_id,
    status: meta.status,
    closed: true,
    closed_at: meta.closed_at ?? '',
    stopped,
    already_closed: already,
  }
}
