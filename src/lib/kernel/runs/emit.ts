/**
 * `actors emit`: a Run appending to its own Trace. The Run is found through
 * the environment its supervisor gave it (ACTORS_STATE_DIR and
 * ACTORS_RUN_INSTANCE), and the instance must match run.json so a leftover
 * process of an earlier generation cannot write into a newer one.
 */
import {usageError} from '../../base/platform/errors.js'
import {resolveRunRef} from '../../base/platform/home.js'
import {notifyStateChange} from '../../base/bell/notify.js'
import {checkEmitAuthority} from './emit-authority.js'
import {resolveOwnRun} from './lineage.js'
import {requireRun} from './store.js'
import {ATTENTION_LEVELS, TRACE_KIND_PATTERN, appendTraceEvent, type Attention, type TraceEvent} from './trace.js'
import {addUsage, type UsageTotals} from './usage.js'

export interface EmitTarget {
  dir: string
  home: string
  run: string
  runInstanceId: string
}

/**
 * The Run an `emit` writes to: `--run` when given, else the one in the
 * environment; refused unless the caller is of its tree or has its owner, and
 * while it is live (emit-authority.ts).
 */
export function resolveEmitTarget(
  home: string,
  runRef: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
): EmitTarget {
  if (runRef) {
    const state = requireRun(home, resolveRunRef(home, runRef))
    checkEmitAuthority(home, state, env)
    return {dir: state.dir, home, run: state.meta.run, runInstanceId: state.meta.run_instance_id}
  }
  const own = resolveOwnRun(
    {
      command: 'emit',
      outsideFix: 'run it from a command started by `actors run`, or pass --run RUN',
      staleFix: 'this process belongs to an earlier launch of the Run; its events are refused',
    },
    env,
    home,
  )
  checkEmitAuthority(own.home, own.state, env)
  return {dir: own.state.dir, home: own.home, run: own.state.meta.run, runInstanceId: own.instance}
}

export interface EmitInput {
  kind: string
  summary?: string
  data?: string
  attention?: string
  level?: string
}

const MAX_SUMMARY = 2000
const LEVELS = ['info', 'warn', 'error'] as const

/** Refuse kinds only the kernel writes (`runtime.*`): a Run must not fake its own end or adoption (exit 2). */
export function checkEmittableKind(kind: string): void {
  if (kind === 'runtime' || kind.startsWith('runtime.')) {
    throw usageError(
      `event kind ${JSON.stringify(kind)} is reserved: kinds under "runtime." are written by the kernel only`,
      'name your own kind, e.g. build.done or review.question',
    )
  }
}

/**
 * Check an event before any Run is looked up, so bad input is exit 2 whatever
 * the target (and a refused caller learns nothing from the order of checks).
 * Returns the parsed `--data`.
 */
export function checkEmitInput(input: EmitInput): unknown {
  checkEmittableKind(input.kind)
  if (!TRACE_KIND_PATTERN.test(input.kind) || input.kind.length > 128) {
    throw usageError(
      `event kind ${JSON.stringify(input.kind)} is not valid`,
      'use lowercase dotted words, e.g. build.step or review.done',
    )
  }
  let data: unknown
  if (input.data !== undefined) {
    try {
      data = JSON.parse(input.data)
    } catch {
      throw usageError('--data is not valid JSON', `e.g. --data '{"files": 3}'`)
    }
  }
  if (input.summary !== undefined && input.summary.length > MAX_SUMMARY) {
    throw usageError(
      `--summary is ${input.summary.length} characters, over the ${MAX_SUMMARY} limit`,
      'shorten it; put details in --data or a file',
    )
  }
  if (input.attention !== undefined && !(ATTENTION_LEVELS as readonly string[]).includes(input.attention)) {
    throw usageError(`--attention: "${input.attention}" is not one of ${ATTENTION_LEVELS.join(', ')}`)
  }
  if (input.level !== undefined && !(LEVELS as readonly string[]).includes(input.level)) {
    throw usageError(`--level: "${input.level}" is not one of ${LEVELS.join(', ')}`)
  }
  return data
}

/** Append one Trace event; attention other than `notify` rings the doorbell so the owner's `wait` wakes. */
export function emitEvent(target: EmitTarget, input: EmitInput): TraceEvent {
  const data = checkEmitInput(input)
  const event = appendTraceEvent(target.dir, {
    kind: input.kind,
    ...(input.summary !== undefined ? {summary: input.summary} : {}),
    ...(data !== undefined ? {data} : {}),
    ...(input.level ? {level: input.level} : {}),
    ...(input.attention ? {attention: input.attention as Attention} : {}),
    run_instance_id: target.runInstanceId,
  })
  if (input.attention) notifyStateChange(target.home)
  return event
}

/** Report token usage: one `usage` Trace event plus the Run's running totals. */
export function emitUsage(target: EmitTarget, tokens: UsageInput): {event: TraceEvent; totals: UsageTotals} {
  const report = checkUsageInput(tokens)
  const event = appendTraceEvent(target.dir, {
    kind: 'usage',
    summary: `${report.tokens} tokens`,
    data: report,
    run_instance_id: target.runInstanceId,
  })
  const totals = addUsage(target.dir, report)
  notifyStateChange(target.home)
  return {event, totals}
}

export interface UsageInput {
  tokens?: number
  prompt?: number
  completion?: number
}

/** Check a usage report before any Run is looked up (exit 2), and return it as recorded. */
export function checkUsageInput(tokens: UsageInput): {
  tokens: number
  prompt_tokens: number
  completion_tokens: number
} {
  const prompt = tokens.prompt ?? 0
  const completion = tokens.completion ?? 0
  const total = tokens.tokens ?? prompt + completion
  if (tokens.tokens === undefined && tokens.prompt === undefined && tokens.completion === undefined) {
    throw usageError('emit usage needs --tokens N or --prompt-tokens/--completion-tokens')
  }
  for (const [name, value] of [
    ['tokens', total],
    ['prompt-tokens', prompt],
    ['completion-tokens', completion],
  ] as const) {
    if (!Number.isSafeInteger(value) || value < 0) throw usageError(`--${name}: ${value} is not a non-negative integer`)
  }
  return {tokens: total, prompt_tokens: prompt, completion_tokens: completion}
}
