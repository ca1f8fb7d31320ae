/**
 * Delivering a declared action to a Run's service (SPEC: Control): journaled
 * in controls.jsonl, then sent over the Run's endpoint of its own generation,
 * or left queued for a polling service to claim. A runtime name the Recipe
 * declared may fall back to the kernel when the service cannot be reached
 * (Unreachable); a refusal is the service's exit code.
 */
import {ActorsError, EXIT, notActiveError} from '../../base/platform/errors.js'
import type {RunState} from '../../kernel/runs/store.js'
import type {CascadeOutcome} from '../tree/cascade.js'
import {
  EndpointError,
  REQUEST_TIMEOUT_MS,
  readControlEndpoint,
  sendControlRequest,
  type ControlEndpoint,
  type ControlReply,
} from '../../kernel/signals/endpoint.js'
import {
  appendControlRecord,
  completeControl,
  readControlRecord,
  waitForControlFinished,
  type ControlRecord,
} from '../../kernel/signals/journal.js'

/** How long `control` waits for a polling service to finish a queued record. */
export const CLAIM_WAIT_MS = 5000
export interface ServiceActionResult {
  action: string
  run: string
  run_instance_id: string
  handled_by: 'service'
  reply: ControlReply
  record: ControlRecord | null
  /** stop: the Run's status once it ended (or as it stood when the wait gave up). */
  status?: string
  descendants?: CascadeOutcome
}

/** Reason a service could not be reached: the kernel may act instead. */
export class Unreachable {
  constructor(readonly reason: string) {}
}

/** The endpoint to use, `undefined` for none, or Unreachable/throw for one of another generation. */
function currentEndpoint(state: RunState, fallbackAllowed: boolean): ControlEndpoint | undefined | Unreachable {
  let endpoint: ControlEndpoint | undefined
  try {
    endpoint = readControlEndpoint(state.dir)
  } catch (error) {
    if (fallbackAllowed) return new Unreachable(`control-endpoint.json is unreadable: ${(error as Error).message}`)
    throw notActiveError(`${(error as Error).message}`, 'the service must rewrite its endpoint; nothing was sent')
  }
  if (endpoint && endpoint.run_instance_id !== state.meta.run_instance_id) {
    if (fallbackAllowed) return new Unreachable(`the endpoint belongs to generation ${endpoint.run_instance_id}`)
    throw notActiveError(
      `Run ${state.meta.run}: control-endpoint.json is for generation ${endpoint.run_instance_id}, not the current ${state.meta.run_instance_id}; nothing was sent`,
      'the service of the current generation has not published its endpoint yet; retry once it has',
      {endpoint_generation: endpoint.run_instance_id, generation: state.meta.run_instance_id},
    )
  }
  return endpoint
}

/**
 * Deliver a declared action: journal it, then send it over the endpoint (or
 * wait for a polling service to finish it). With `fallbackAllowed` (a runtime
 * name the Recipe declared) an unreachable service yields Unreachable so the
 * kernel can act instead.
 */
export async function serviceAction(
  state: RunState,
  action: string,
  value: string | undefined,
  fallbackAllowed: boolean,
): Promise<ServiceActionResult | Unreachable> {
  const {meta, dir} = state
  const endpoint = currentEndpoint(state, fallbackAllowed)
  if (endpoint instanceof Unreachable) return endpoint
  if (!endpoint && fallbackAllowed) return new Unreachable('the Run has no control endpoint')
  const record = appendControlRecord(dir, {
    action,
    input: value,
    runInstanceId: meta.run_instance_id,
    via: endpoint ? 'socket' : 'journal',
  })
  const base = {action, run: meta.run, run_instance_id: meta.run_instance_id, handled_by: 'service' as const}

  if (!endpoint) {
    const final = await waitForControlFinished(dir, record.id, CLAIM_WAIT_MS)
    if (!final || final.status === 'queued' || final.status === 'claimed') {
      throw notActiveError(
        `Run ${meta.run}: control ${record.id} (${action}) is still ${final?.status ?? 'queued'} after ${CLAIM_WAIT_MS / 1000}s; the Run has no endpoint and no service finished it`,
        'it stays in controls.jsonl for the service to claim; check later with `actors control RUN status`',
        {record: final ?? record},
      )
    }
    const reply =
      (final.reply as ControlReply | undefined) ??
      (final.status === 'handled' ? {ok: true} : {ok: false, error: final.error ?? 'failed'})
    return settleReply({...base, reply, record: final})
  }

  let reply: ControlReply
  try {
    reply = await sendControlRequest(
      endpoint,
      {
        id: record.id,
        run_instance_id: meta.run_instance_id,
        action,
        ...(value !== undefined ? {input: value} : {}),
      },
      dir,
    )
  } catch (error) {
    if (!(error instanceof EndpointError)) throw error
    return failedSend(error, state, record, action, fallbackAllowed)
  }
  // The service helper records the outcome itself; this covers services that do not.
  if (reply.ok) completeControl(dir, record.id, 'handled', {reply})
  else completeControl(dir, record.id, 'failed', {reply, error: reply.error})
  return settleReply({...base, reply, record: readControlRecord(dir, record.id) ?? null})
}

/**
 * A request the endpoint did not answer: Unreachable when the kernel may act
 * instead (a runtime name, `fallbackAllowed`), else the refusal to print.
 */
function failedSend(
  error: EndpointError,
  state: RunState,
  record: ControlRecord,
  action: string,
  fallbackAllowed: boolean,
): Unreachable {
  const {meta, dir} = state
  const recordId = record.id
  if (error.kind === 'unreachable') {
    if (fallbackAllowed) {
      completeControl(dir, recordId, 'failed', {
        error: `service unreachable (${error.message}); the kernel applied ${action}`,
      })
      return new Unreachable(`the service did not accept the connection (${error.message})`)
    }
    throw notActiveError(
      `Run ${meta.run}: endpoint not ready (${error.message}); control ${recordId} stays queued`,
      'the service may be starting or gone; retry, or let it claim the record when it is back',
      {record: readControlRecord(dir, recordId) ?? record},
    )
  }
  if (error.kind === 'timeout') {
    // A runtime name answered by silence is the kernel's to apply: a service cannot opt its Run out of stop or pause.
    if (fallbackAllowed) {
      completeControl(dir, recordId, 'failed', {
        error: `no reply within ${REQUEST_TIMEOUT_MS / 1000}s; the kernel applied ${action}`,
      })
      return new Unreachable(`the service did not reply within ${REQUEST_TIMEOUT_MS / 1000}s`)
    }
    throw notActiveError(
      `Run ${meta.run}: no reply to ${action} within ${REQUEST_TIMEOUT_MS / 1000}s; control ${recordId} is ${readControlRecord(dir, recordId)?.status ?? 'unknown'}`,
      'the service is busy or hung; retry later',
      {record: readControlRecord(dir, recordId) ?? record},
    )
  }
  completeControl(dir, recordId, 'failed', {error: error.message})
  throw new ActorsError(
    `Run ${meta.run}: ${error.message}`,
    EXIT.failed,
    'the service broke the control protocol (one JSON line, at most 4 KiB)',
    {record: readControlRecord(dir, recordId) ?? record},
  )
}

/** A refusal from the service is a failed command (exit 1, or the code the service names: 2, 3 or 5). */
function settleReply(outcome: ServiceActionResult): ServiceActionResult {
  if (outcome.reply.ok) return outcome
  const wanted = Number((outcome.reply as {exit_code?: unknown}).exit_code)
  const code = [EXIT.usage, EXIT.notActive, EXIT.refused].includes(wanted as 2 | 3 | 5) ? wanted : EXIT.failed
  throw new ActorsError(`Run ${outcome.run}: ${outcome.action} failed: ${outcome.reply.error}`, code, undefined, {
    reply: outcome.reply,
    record: outcome.record,
  })
}
