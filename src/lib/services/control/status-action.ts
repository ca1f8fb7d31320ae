/**
 * `control RUN status` (SPEC: Control): the kernel's view of the Run, merged
 * with its service's reply when the Run has an endpoint of its generation,
 * or with what a finished Run's service left.
 */
import {randomUuid} from '../../base/platform/builtins.js'
import {isTerminal} from '../../base/records/run.js'
import type {RunState} from '../../kernel/runs/store.js'
import {
  EndpointError,
  readControlEndpoint,
  sendControlRequest,
  type ControlEndpoint,
  type ControlReply,
} from '../../kernel/signals/endpoint.js'
import {appendControlRecord, completeControl, type ControlRecord} from '../../kernel/signals/journal.js'
import type {ServiceKind} from '../../kernel/signals/standalone.js'
import {kernelStatus, type RunControlStatus} from '../../kernel/signals/status.js'

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
  const fields =
    nested && typeof nested === 'object' && !Array.isArray(nested) ? (nested as Record<string, unknown>) : reply
  const merged: StatusResult = {...view}
  for (const [key, value] of Object.entries(fields)) {
    if (key !== 'ok' && key !== 'error' && !(key in merged)) merged[key] = value
  }
  return merged
}

/**
 * The kernel's view, merged with the service's reply when the Run has an
 * endpoint of its generation. A finished Run has no service to ask: when its
 * service is of a known kind, its last known state comes from what the
 * service left (a playback Run's checkpoint, SPEC: Music).
 */
export async function statusAction(
  state: RunState,
  declared: boolean,
  value: string | undefined,
  kind: ServiceKind | undefined,
): Promise<StatusResult> {
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
      record = appendControlRecord(state.dir, {
        action: 'status',
        input: value,
        runInstanceId: state.meta.run_instance_id,
        via: 'socket',
      })
    } catch {}
  }
  try {
    view.service = await sendControlRequest(
      endpoint,
      {
        id: record?.id ?? randomUuid(),
        run_instance_id: state.meta.run_instance_id,
        action: 'status',
        ...(value !== undefined ? {input: value} : {}),
      },
      state.dir,
    )
    if (record)
      completeControl(state.dir, record.id, (view.service as ControlReply).ok ? 'handled' : 'failed', {
        reply: view.service,
      })
    if ((view.service as ControlReply).ok) return mergeServiceStatus(view, view.service as ControlReply)
  } catch (error) {
    view.service = {
      ok: false,
      error: (error as Error).message,
      unreachable: error instanceof EndpointError && error.kind === 'unreachable',
    }
    if (record) completeControl(state.dir, record.id, 'failed', {error: (error as Error).message})
  }
  return view
}
