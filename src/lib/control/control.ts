/**
 * `actors control RUN ACTION [VALUE]`: the single entry that routes an action
 * (SPEC: Control). `kill` is always the kernel's. The other runtime actions
 * (pause, resume, stop, status) are the kernel's unless the Recipe declares
 * the same name: then the Run's service gets it and the kernel acts only when
 * the service cannot be reached. Declared actions become journal records and
 * are sent over the Run's endpoint when it has one of its own generation, or
 * left queued for a polling service.
 */
import {randomUuid} from '../platform/builtins.js'
import {ActorsError, EXIT, notActiveError, usageError} from '../platform/errors.js'
import {resolveRunRef} from '../platform/home.js'
import {readRunState, requireRun, updateRunMeta, type RunState} from '../runs/store.js'
import {isTerminal} from '../records/run.js'
import {awaitRunEnd} from '../runs/await-run.js'
import {followUpEndedRuns} from '../tree/after-run.js'
import {cascadeEnd, type CascadeOutcome} from '../tree/cascade.js'
import {EndpointError, REQUEST_TIMEOUT_MS, readControlEndpoint, sendControlRequest, type ControlEndpoint, type ControlReply} from '../signals/endpoint.js'
import {appendControlRecord, completeControl, readControlRecord, validateControlInput, waitForControlFinished, type ControlRecord} from '../signals/journal.js'
import {kindHolding, type ServiceKind} from '../signals/standalone.js'
import {controlStandalone, standaloneServiceDir} from './standalone-route.js'
import type {RuntimeActionResult} from '../signals/runtime-actions.js'
import {isRuntimeAction, RUNTIME_ACTIONS} from '../records/actions.js'
import {kernelStatus, type RunControlStatus} from '../signals/status.js'
import {executorOf, type Executor} from '../executors/index.js'
import type {InterruptResult} from '../signals/interrupt.js'

/** How long `control` waits for a polling service to finish a queued record. */
export const CLAIM_WAIT_MS = 5000
/** How long a service-handled `stop` waits for the Run's result before reporting. */
const STOP_RESULT_WAIT_MS = 10_000

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

export type KernelActionResult = RuntimeActionResult & {
  handled_by: 'kernel'
  /** stop/kill: the descendant Runs that were ended with it. */
  descendants?: CascadeOutcome
  /** Set when a declared action of a runtime name fell back to the kernel. */
  fallback?: string
}

export type StatusResult = RunControlStatus & {action: 'status'; [serviceField: string]: unknown}

/**
 * `status` merges the kernel's view with the service's reply (SPEC: Control):
 * the reply's fields, or those of its `status` object (the music service's
 * `{state, index, track, volume, position_seconds, ...}`), join the top level
 * wherever the kernel has no field of that name; the whole reply stays under
 * `service`.
 */
function mergeServiceStatus(view: StatusResult, reply: ControlReply): StatusResult {
  const nested = (reply as {status?: unknown}).status
  const fields = nested && typeof nested === 'object' && !Array.isArray(nested) ? (nested as Record<string, unknown>) : reply
  const merged: StatusResult = {...view}
  for (const [key, value] of Object.entries(fields)) {
    if (key !== 'ok' && key !== 'error' && !(key in merged)) merged[key] = value
  }
  return merged
}

export type ControlOutcome = KernelActionResult | ServiceActionResult | StatusResult | InterruptResult | {standalone: true; [key: string]: unknown}

/** Reason a service could not be reached: the kernel may act instead. */
class Unreachable {
  constructor(readonly reason: string) {}
}

/**
 * Apply `action` (with optional `value`) to the Run `ref` (id or state dir)
 * and return what happened. Failures are ActorsErrors with SPEC exit codes:
 * 2 bad action/value, 3 finished Run / stale generation / endpoint not
 * ready, 4 unknown Run, 5 backpressure.
 */
export async function controlRun(
  home: string,
  ref: string,
  action: string,
  value: string | undefined,
  services: readonly ServiceKind[],
): Promise<ControlOutcome> {
  try {
    return await applyControl(home, ref, action, value, services)
  } finally {
    // What the action ended (a stop, a kill, a cascade) has follow-ups of the tree: locks freed, queued siblings started.
    followUpEndedRuns()
  }
}

async function applyControl(home: string, ref: string, action: string, value: string | undefined, services: readonly ServiceKind[]): Promise<ControlOutcome> {
  const standalone = standaloneServiceDir(home, ref, action, services)
  if (standalone) return controlStandalone(standalone.dir, standalone.kind, action, value)

  validateControlInput(action, value)
  const state = requireRun(home, resolveRunRef(home, ref))
  // A Run this machine cannot act on directly (a job on another node) is controlled through its executor.
  const executor = executorOf(state.meta)
  const relayed = executor.relay(home, state, action, value)
  if (relayed) return (await relayed) as ControlOutcome
  const declared = Array.isArray(state.meta.control) ? state.meta.control : []
  // A Run whose service is of a kind we know (its files in the state dir: a playback Run keeps playback.json there).
  const kind = kindHolding(state.dir, services)
  if (action !== 'kill' && declared.includes(action)) {
    // Its requests are checked here as for a standalone service of that kind: a bad value is exit 2, nothing is sent or journaled.
    kind?.checkRequest?.(action, value)
  }

  if (action === 'status') {
    if (value !== undefined && !declared.includes('status')) throw noValueError(action, value)
    return statusAction(state, declared.includes('status'), value, kind)
  }
  if (action === 'interrupt') {
    // SIGINT to the command's process group, unless its service declared `interrupt` (then the kernel only stands in).
    if (!declared.includes('interrupt')) {
      if (value !== undefined) throw noValueError(action, value)
      return executor.interrupt(state.dir)
    }
    if (isTerminal(state.meta.status)) throw finishedError(state, action)
    const outcome = await serviceAction(state, action, value, true)
    return outcome instanceof Unreachable ? executor.interrupt(state.dir, outcome.reason) : outcome
  }
  if (isRuntimeAction(action)) {
    const runtime = action as 'pause' | 'resume' | 'stop' | 'kill'
    const serviceFirst = action !== 'kill' && declared.includes(action)
    if (!serviceFirst && value !== undefined) throw noValueError(action, value)
    if (serviceFirst && !isTerminal(state.meta.status)) {
      const outcome = runtime === 'stop' ? await serviceStop(home, state, value) : await serviceAction(state, action, value, true)
      if (!(outcome instanceof Unreachable)) return outcome
      return kernelAction(home, executor, state, runtime, outcome.reason)
    }
    return kernelAction(home, executor, state, runtime)
  }
  if (!declared.includes(action)) {
    const accepted = [...RUNTIME_ACTIONS, ...declared]
    throw usageError(
      `Run ${state.meta.run} does not accept "${action}"`,
      declared.length
        ? `declared actions: ${declared.join(', ')}; every Run also accepts ${RUNTIME_ACTIONS.join(', ')}`
        : `this Run declares no actions of its own; it accepts ${RUNTIME_ACTIONS.join(', ')}`,
      {declared, actions: accepted},
    )
  }
  if (isTerminal(state.meta.status)) throw finishedError(state, action)
  const outcome = await serviceAction(state, action, value, false)
  if (outcome instanceof Unreachable) throw notActiveError(outcome.reason) // not reached: only fallbacks return Unreachable
  return outcome
}

function noValueError(action: string, value: string): ActorsError {
  return usageError(`"${action}" takes no value (got ${JSON.stringify(value.length > 40 ? value.slice(0, 40) + '…' : value)})`, `actors control RUN ${action}`)
}

function finishedError(state: RunState, action: string): ActorsError {
  return notActiveError(`Run ${state.meta.run} is ${state.meta.status}; cannot ${action} it`, `inspect it with \`actors inspect ${state.meta.run}\``)
}

/** The kernel's own verb, done by the Run's executor (executors/executor.ts), which acts on this machine. */
async function kernelAction(
  home: string,
  executor: Executor,
  state: RunState,
  action: 'pause' | 'resume' | 'stop' | 'kill',
  fallback?: string,
): Promise<KernelActionResult> {
  if (isTerminal(state.meta.status)) {
    // An `exited` Run (its supervisor vanished) may have left its command running: stop/kill end that.
    const leftovers = action === 'stop' || action === 'kill' ? await executor.endLeftovers(home, state.dir, action) : undefined
    if (leftovers) return {...leftovers, handled_by: 'kernel'}
    throw finishedError(state, action)
  }
  if (action === 'pause' || action === 'resume') {
    return {...executor.pauseOrResume(home, state, action), handled_by: 'kernel', ...(fallback ? {fallback} : {})}
  }
  // Descendant Runs follow a stopped or killed parent (trees), deepest first, before the parent itself;
  // but not when the parent's own processes fail the identity guard (that refusal comes first).
  executor.checkEnd(state.meta)
  const cascade = await cascadeEnd(home, state.dir, action, endRunAnywhere)
  const result = await executor.end(home, state.dir, action)
  return {...result, handled_by: 'kernel', ...(fallback ? {fallback} : {}), ...descendantsField(cascade)}
}

/** End one descendant Run (stop or kill) through its own executor, wherever its supervisor runs. */
async function endRunAnywhere(home: string, dir: string, mode: 'stop' | 'kill'): Promise<unknown> {
  return executorOf(readRunState(dir)?.meta).end(home, dir, mode)
}

/** `{descendants}` when the cascade reached any descendant Run; nothing otherwise. */
function descendantsField(cascade: CascadeOutcome): {descendants?: CascadeOutcome} {
  const followed = cascade.ended.length + cascade.cancelled_queued.length + cascade.errors.length > 0
  return followed ? {descendants: cascade} : {}
}

/**
 * A `stop` the Run's service declared: descendants end first (as for the
 * kernel's stop), then the service is asked to stop itself. The Run is marked
 * as ending `cancelled` before asking, so however its process then exits the
 * supervisor records what the user did (a stop), not a plain `done`; the mark
 * is withdrawn when the service refuses or cannot be reached.
 */
async function serviceStop(home: string, state: RunState, value: string | undefined): Promise<ServiceActionResult | Unreachable> {
  const cascade = await cascadeEnd(home, state.dir, 'stop', endRunAnywhere)
  const mark = {status: 'cancelled' as const, at: new Date().toISOString(), by: 'control:service-stop'}
  updateRunMeta(state.dir, (meta) => (isTerminal(meta.status) || meta.ending ? undefined : {...meta, ending: mark}))
  const withdraw = () =>
    updateRunMeta(state.dir, (meta) => (meta.ending?.by === mark.by && !isTerminal(meta.status) ? {...meta, ending: undefined} : undefined))
  let outcome: ServiceActionResult | Unreachable
  try {
    outcome = await serviceAction(state, 'stop', value, true)
  } catch (error) {
    withdraw()
    throw error
  }
  if (outcome instanceof Unreachable) {
    withdraw()
    return outcome
  }
  const final = await awaitRunEnd(home, state.dir, STOP_RESULT_WAIT_MS)
  return {...outcome, status: final?.meta.status ?? 'unknown', ...descendantsField(cascade)}
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
async function serviceAction(state: RunState, action: string, value: string | undefined, fallbackAllowed: boolean): Promise<ServiceActionResult | Unreachable> {
  const {meta, dir} = state
  const endpoint = currentEndpoint(state, fallbackAllowed)
  if (endpoint instanceof Unreachable) return endpoint
  if (!endpoint && fallbackAllowed) return new Unreachable('the Run has no control endpoint')
  const record = appendControlRecord(dir, {action, input: value, runInstanceId: meta.run_instance_id, via: endpoint ? 'socket' : 'journal'})
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
    const reply = (final.reply as ControlReply | undefined) ?? (final.status === 'handled' ? {ok: true} : {ok: false, error: final.error ?? 'failed'})
    return settleReply({...base, reply, record: final})
  }

  let reply: ControlReply
  try {
    reply = await sendControlRequest(endpoint, {id: record.id, run_instance_id: meta.run_instance_id, action, ...(value !== undefined ? {input: value} : {})})
  } catch (error) {
    if (!(error instanceof EndpointError)) throw error
    if (error.kind === 'unreachable') {
      if (fallbackAllowed) {
        completeControl(dir, record.id, 'failed', {error: `service unreachable (${error.message}); the kernel applied ${action}`})
        return new Unreachable(`the service did not accept the connection (${error.message})`)
      }
      throw notActiveError(
        `Run ${meta.run}: endpoint not ready (${error.message}); control ${record.id} stays queued`,
        'the service may be starting or gone; retry, or let it claim the record when it is back',
        {record: readControlRecord(dir, record.id) ?? record},
      )
    }
    if (error.kind === 'timeout') {
      throw notActiveError(
        `Run ${meta.run}: no reply to ${action} within ${REQUEST_TIMEOUT_MS / 1000}s; control ${record.id} is ${readControlRecord(dir, record.id)?.status ?? 'unknown'}`,
        fallbackAllowed ? `the service is busy or hung; \`actors control ${meta.run} kill\` always works` : 'the service is busy or hung; retry later',
        {record: readControlRecord(dir, record.id) ?? record},
      )
    }
    completeControl(dir, record.id, 'failed', {error: error.message})
    throw new ActorsError(`Run ${meta.run}: ${error.message}`, EXIT.failed, 'the service broke the control protocol (one JSON line, at most 4 KiB)', {
      record: readControlRecord(dir, record.id) ?? record,
    })
  }
  // The service helper records the outcome itself; this covers services that do not.
  if (reply.ok) completeControl(dir, record.id, 'handled', {reply})
  else completeControl(dir, record.id, 'failed', {reply, error: reply.error})
  return settleReply({...base, reply, record: readControlRecord(dir, record.id) ?? null})
}

/** A refusal from the service is a failed command (exit 1, or the code the service names: 2, 3 or 5). */
function settleReply(outcome: ServiceActionResult): ServiceActionResult {
  if (outcome.reply.ok) return outcome
  const wanted = Number((outcome.reply as {exit_code?: unknown}).exit_code)
  const code = [EXIT.usage, EXIT.notActive, EXIT.refused].includes(wanted as 2 | 3 | 5) ? wanted : EXIT.failed
  throw new ActorsError(`Run ${outcome.run}: ${outcome.action} failed: ${outcome.reply.error}`, code, undefined, {reply: outcome.reply, record: outcome.record})
}

/**
 * The kernel's view, merged with the service's reply when the Run has an
 * endpoint of its generation. A finished Run has no service to ask: when its
 * service is of a known kind, its last known state comes from what the
 * service left (a playback Run's checkpoint, SPEC: Music).
 */
async function statusAction(state: RunState, declared: boolean, value: string | undefined, kind: ServiceKind | undefined): Promise<StatusResult> {
  const view: StatusResult = {action: 'status', ...kernelStatus(state)}
  if (isTerminal(state.meta.status)) {
    if (!kind?.lastKnownStatus) return view
    try {
      view.service = {ok: true, action: 'status', source: 'checkpoint', status: kind.lastKnownStatus(state.dir)}
    } catch (error) {
      view.service = {ok: false, error: (error as Error).message}
      return view
    }
    return mergeServiceStatus(view, view.service as ControlReply)
  }
  let endpoint: ControlEndpoint | undefined
  try {
    endpoint = readControlEndpoint(state.dir)
  } catch (error) {
    view.service = {ok: false, error: (error as Error).message}
    return view
  }
  if (!endpoint) return view
  if (endpoint.run_instance_id !== state.meta.run_instance_id) {
    view.service = {ok: false, error: `endpoint of another generation (${endpoint.run_instance_id}); not asked`}
    return view
  }
  // Status is a read: it is journaled only when the Recipe declares it, and never refused for backpressure.
  let record: ControlRecord | undefined
  if (declared) {
    try {
      record = appendControlRecord(state.dir, {action: 'status', input: value, runInstanceId: state.meta.run_instance_id, via: 'socket'})
    } catch {}
  }
  try {
    view.service = await sendControlRequest(endpoint, {
      id: record?.id ?? randomUuid(),
      run_instance_id: state.meta.run_instance_id,
      action: 'status',
      ...(value !== undefined ? {input: value} : {}),
    })
    if (record) completeControl(state.dir, record.id, (view.service as ControlReply).ok ? 'handled' : 'failed', {reply: view.service})
    if ((view.service as ControlReply).ok) return mergeServiceStatus(view, view.service as ControlReply)
  } catch (error) {
    view.service = {ok: false, error: (error as Error).message, unreachable: error instanceof EndpointError && error.kind === 'unreachable'}
    if (record) completeControl(state.dir, record.id, 'failed', {error: (error as Error).message})
  }
  return view
}
