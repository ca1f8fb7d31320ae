/**
 * The kernel's view of a Run for `actors control RUN status`: status,
 * generation, supervisor and command pids (identity-checked), every live
 * process of the Run, declared actions, the endpoint and the journal. Reading
 * it never signals anything and never fails on a mismatched pid: it reports it.
 */
import {supervisorExclusion} from '../../base/records/supervisor-args.js'
import {ledGroups, readProcessIdentity, isSameProcess} from '../../base/platform/process-identity.js'
import {openUnit, runUnitOwner, type ContainmentRecord, type UnitUsage} from '../containment/index.js'
import type {RunState} from '../runs/store.js'
import {isTerminal, type ChildProcessRecord} from '../../base/records/run.js'
import {generationOf} from '../../base/records/generation-layout.js'
import {readControlEndpoint, type ControlEndpoint} from './endpoint.js'
import {isPendingControl, readControlRecords} from './journal.js'
import {RUNTIME_ACTIONS} from '../../base/records/actions.js'

export interface RunControlStatus {
  run: string
  run_instance_id: string
  /** Which launch of the Run id this is (run.json `generation`; 1 for the first). Controls are fenced by run_instance_id. */
  generation: number
  status: string
  state_dir: string
  recipe: string | null
  /** The supervisor. */
  pid: number | null
  supervisor_alive: boolean
  child_pid: number | null
  pgid: number | null
  /** Every live process of the Run (command processes and their descendants). */
  pids: number[]
  /** Which unit holds the Run's processes (run.json `containment`). */
  containment: ContainmentRecord | null
  /** Live: CPU so far and memory now (and its peak); finished: result.json `resources`. */
  resources: Partial<UnitUsage> | null
  /** Recorded pids that are alive but are no longer the recorded process. */
  identity_mismatch: number[]
  paused_at: string | null
  ending: RunState['meta']['ending'] | null
  /** The Recipe's own actions. */
  declared: string[]
  /** Everything `actors control` accepts for this Run. */
  actions: string[]
  endpoint: (Pick<ControlEndpoint, 'path' | 'ready_at'> & {current: boolean}) | null
  controls: {pending: number; total: number}
  result: {exit_code: number | null; signal: string | null; reason: string | null; completed_at: string} | null
  /** The service's reply to `status`, when it has an endpoint of this generation. */
  service: unknown
}

/** Build the kernel's status document for one Run (already read and reconciled). */
export function kernelStatus(state: RunState): RunControlStatus {
  const {meta, result, dir} = state
  const live = !isTerminal(meta.status)
  const records: ChildProcessRecord[] = Array.isArray(meta.children_processes) ? meta.children_processes : []
  const verified: ChildProcessRecord[] = []
  const mismatch: number[] = []
  if (live) {
    for (const r of records) {
      if (!readProcessIdentity(r.pid)) continue
      if (r.identity && isSameProcess({...r.identity, pid: r.pid})) verified.push(r)
      else mismatch.push(r.pid)
    }
  }
  const unit = openUnit(
    meta.containment,
    () => ({
      rootPids: verified.map((r) => r.pid),
      pgids: ledGroups(verified),
      runInstanceId: meta.run_instance_id,
      stateDir: dir,
      exclude: supervisorExclusion(meta, dir),
    }),
    runUnitOwner(dir, meta),
  )
  const pids = live ? unit.members().sort((a, b) => a - b) : []
  const resources = live ? unit.usage() : ((result?.resources as UnitUsage | undefined) ?? null)
  let endpoint: RunControlStatus['endpoint'] = null
  try {
    const found = readControlEndpoint(dir)
    if (found)
      endpoint = {path: found.path, ready_at: found.ready_at, current: found.run_instance_id === meta.run_instance_id}
  } catch {}
  let journal = {pending: 0, total: 0}
  try {
    const all = readControlRecords(dir)
    journal = {pending: all.filter(isPendingControl).length, total: all.length}
  } catch {}
  const declared = Array.isArray(meta.control) ? meta.control : []
  return {
    run: meta.run,
    run_instance_id: meta.run_instance_id,
    generation: generationOf(meta),
    status: meta.status,
    state_dir: dir,
    recipe: meta.recipe ?? null,
    pid: meta.pid ?? null,
    supervisor_alive: live && isSameProcess(meta.process_identity),
    child_pid: meta.child_pid ?? null,
    pgid: meta.pgid ?? null,
    pids,
    containment: (meta.containment as ContainmentRecord | undefined) ?? null,
    resources,
    identity_mismatch: mismatch,
    paused_at: (meta.paused_at as string | undefined) ?? null,
    ending: meta.ending ?? null,
    declared,
    actions: [...new Set([...RUNTIME_ACTIONS, ...declared])],
    endpoint,
    controls: journal,
    result: result
      ? {exit_code: result.exit_code, signal: result.signal, reason: result.reason, completed_at: result.completed_at}
      : null,
    service: null,
  }
}
