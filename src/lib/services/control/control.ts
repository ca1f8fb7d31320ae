/**
 * `actors control RUN ACTION [VALUE]`: the single entry that routes an action
 * (SPEC: Control). `kill` is always the kernel's. The other runtime actions
 * (pause, resume, stop, status) are the kernel's unless the Recipe declares
 * the same name: then the Run's service gets it and the kernel acts only when
 * the service cannot be reached. Declared actions go to the Run's service
 * (service-action.ts); `status` merges both views (status-action.ts).
 */
import {type ActorsError, notActiveError, usageError} from '../../base/platform/errors.js'
import {resolveRunRef} from '../../base/platform/home.js'
import {readRunState, requireRun, updateRunMeta, type RunState} from '../../kernel/runs/store.js'
import {isTerminal} from '../../base/records/run.js'
import {awaitRunEnd} from '../../kernel/runs/await-run.js'
import {followUpEndedRuns} from '../tree/after-run.js'
import {cascadeEnd, type CascadeOutcome} from '../tree/cascade.js'
import {askedFrom, controlEnding} from '../../kernel/runs/end-request.js'
import {markEnding} from '../../kernel/runs/tree-ending.js'
import {validateControlInput} from '../../kernel/signals/journal.js'
import {kindHolding, type ServiceKind} from '../../kernel/signals/standalone.js'
import {controlStandalone, standaloneServiceDir} from './standalone-route.js'
import {endFirst} from './end-first.js'
import {serviceAction, Unreachable, type ServiceActionResult} from './service-action.js'
import {statusAction, type StatusResult} from './status-action.js'
import type {RuntimeActionResult} from '../../kernel/signals/runtime-actions.js'
import type {EndOptions} from '../../kernel/signals/end-run.js'
import {isRuntimeAction, RUNTIME_ACTIONS} from '../../base/records/actions.js'
import {provenExecutorOf, type Executor} from '../../kernel/executors/index.js'
import type {InterruptResult} from '../../kernel/signals/interrupt.js'

export type {ServiceActionResult, StatusResult}

/** How long a service-handled `stop` waits for the Run's result before reporting. */
const STOP_RESULT_WAIT_MS = 10_000

export type KernelActionResult = RuntimeActionResult & {
  handled_by: 'kernel'
  /** stop/kill: the descendant Runs that were ended with it. */
  descendants?: CascadeOutcome
  /** Set when a declared action of a runtime name fell back to the kernel. */
  fallback?: string
}

export type ControlOutcome =
  | KernelActionResult
  | ServiceActionResult
  | StatusResult
  | InterruptResult
  | {standalone: true; [key: string]: unknown}

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
    const apply = () => applyControl(home, ref, action, value, services)
    // A stop or kill that its state dir would block ends the unit first (end-first.ts).
    return await (action === 'kill' || action === 'stop' ? endFirst(home, ref, action, apply) : apply())
  } finally {
    // What the action ended (a stop, a kill, a cascade) has follow-ups of the tree: locks freed, queued siblings started.
    followUpEndedRuns()
  }
}

async function applyControl(
  home: string,
  ref: string,
  action: string,
  value: string | undefined,
  services: readonly ServiceKind[],
): Promise<ControlOutcome> {
  const standalone = standaloneServiceDir(home, ref, action, services)
  if (standalone) return controlStandalone(standalone.dir, standalone.kind, action, value)

  validateControlInput(action, value)
  const state = requireRun(home, resolveRunRef(home, ref))
  // A Run this machine cannot act on directly (a job on another node) is controlled through its executor.
  const executor = provenExecutorOf(state.meta, state.dir)
  const relayed = executor.relay(home, state, action, value)
  if (relayed) return (await relayed) as ControlOutcome
  // Declared actions come from a Recipe: an ad-hoc command declares none, whatever its run.json (the Run's to write) says.
  const declared = Array.isArray(state.meta.control) && state.meta.recipe ? state.meta.control : []
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
      const outcome =
        runtime === 'stop' ? await serviceStop(home, state, value) : await serviceAction(state, action, value, true)
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
  return usageError(
    `"${action}" takes no value (got ${JSON.stringify(value.length > 40 ? value.slice(0, 40) + '…' : value)})`,
    `actors control RUN ${action}`,
  )
}

function finishedError(state: RunState, action: string): ActorsError {
  return notActiveError(
    `Run ${state.meta.run} is ${state.meta.status}; cannot ${action} it`,
    `inspect it with \`actors inspect ${state.meta.run}\``,
  )
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
    // An `exited` Run (its supervisor vanished) may have left its command running: stop/kill end that. So may a
    // Run that wrote its own end: pause/resume reach its processes too (pause is no end).
    const leftovers =
      action === 'stop' || action === 'kill'
        ? await executor.endLeftovers(home, state.dir, action)
        : executor.pauseLeftovers(home, state.dir, action)
    if (leftovers) return {...leftovers, handled_by: 'kernel'}
    throw finishedError(state, action)
  }
  if (action === 'pause' || action === 'resume') {
    return {...executor.pauseOrResume(home, state, action), handled_by: 'kernel', ...(fallback ? {fallback} : {})}
  }
  // Descendant Runs follow a stopped or killed parent (trees), deepest first, before the parent itself;
  // but not when the parent's own processes fail the identity guard (that refusal comes first).
  executor.checkEnd(state.meta)
  // A damaged children journal does not spare the Run itself: it is ended, then the damage is reported (exit 1).
  let cascade: CascadeOutcome = {ended: [], cancelled_queued: [], errors: []}
  let damage: unknown
  const graceFrom = Date.now() // a stop gives the whole tree one grace (tree/cascade.ts)
  // Marked ending before the walk: a launch anywhere below is refused from now on, or found by the walk (tree-ending.ts).
  markEnding(home, state.dir, action)
  try {
    cascade = await cascadeEnd(home, state.dir, action, endRunAnywhere, {graceFrom, signalSelf: true})
  } catch (error) {
    damage = error
  }
  const ended = await executor.end(home, state.dir, action, {graceFrom})
  if (damage) throw damage
  // A Run that ended from the stop's first signal (sent with its tree's) says what that signal reached.
  const signalled = [...new Set([...(cascade.selfSignalled ?? []), ...ended.signalled])]
  const result = {...ended, signalled}
  return {...result, handled_by: 'kernel', ...(fallback ? {fallback} : {}), ...descendantsField(cascade)}
}

/** End one descendant Run (stop or kill) through its own executor, wherever its supervisor runs. */
async function endRunAnywhere(
  home: string,
  dir: string,
  mode: 'stop' | 'kill',
  options?: EndOptions,
): Promise<unknown> {
  return provenExecutorOf(readRunState(dir)?.meta, dir).end(home, dir, mode, options)
}

/** `{descendants}` when the cascade reached any descendant Run; nothing otherwise. */
function descendantsField({selfSignalled, ...cascade}: CascadeOutcome): {descendants?: CascadeOutcome} {
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
async function serviceStop(
  home: string,
  state: RunState,
  value: string | undefined,
): Promise<ServiceActionResult | Unreachable> {
  const mark = controlEnding('cancelled', askedFrom(home, state.meta.run), 'control:service-stop')
  // Marked before the walk, so no Run is launched below it meanwhile (kernel/runs/tree-ending.ts).
  updateRunMeta(state.dir, (meta) => (isTerminal(meta.status) || meta.ending ? undefined : {...meta, ending: mark}))
  const cascade = await cascadeEnd(home, state.dir, 'stop', endRunAnywhere)
  const withdraw = () =>
    updateRunMeta(state.dir, (meta) =>
      meta.ending?.by === mark.by && !isTerminal(meta.status) ? {...meta, ending: undefined} : undefined,
    )
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
  // Accepted but still running: the kernel's stop follows, as a graceful stop that hangs ends in pm2 or systemd.
  if (!final || !isTerminal(final.meta.status))
    return new Unreachable(`the service accepted stop, yet the Run still ran after ${STOP_RESULT_WAIT_MS / 1000}s`)
  return {...outcome, status: final.meta.status, ...descendantsField(cascade)}
}
