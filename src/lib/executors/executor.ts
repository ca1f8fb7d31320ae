/**
 * The executor seam (SPEC: Executors; docs/executors.md): where a Run's
 * supervisor runs, and every question and verb whose answer depends on that.
 * Each engine implements the whole interface (local.ts, slurm-executor.ts);
 * no file outside executors/ branches on an executor's kind, it asks the
 * Run's executor (index.ts: executorOf).
 */
import type {RunMeta} from '../records/run.js'
import type {SupervisorCheck} from '../records/supervisor-check.js'
import type {RunState} from '../runs/store.js'
import type {UnitLimits} from '../containment/unit.js'

/** What starting a created Run reports back to `run`. */
export interface StartOutcome {
  /** The local supervisor's pid; null when it starts elsewhere (a Slurm job). */
  pid: number | null
  status?: string
  /** The executor record as it stands after the start (a Slurm job id). */
  executor?: RunMeta['executor']
  /** Why the Run failed to start (it is settled `failed` already). */
  error?: string
}

/** The supervisor's side: what it asks its executor on the machine it runs on. */
export interface SupervisorSide {
  /** Fields the supervisor adds to run.json when it starts (`host`; a Slurm job id and node). */
  startFields(meta: RunMeta, env?: NodeJS.ProcessEnv): Partial<RunMeta>
  /** True when a SIGTERM reaching the supervisor is the executor ending the job at its time limit. */
  termIsTimeLimit(meta: RunMeta, env?: NodeJS.ProcessEnv): boolean
  /** Whether the executor is ending the Run right now (asked when the command died of a signal). */
  ending(meta: RunMeta, env?: NodeJS.ProcessEnv): 'timeout' | 'cancelled' | undefined
}

export interface Executor {
  /** run.json's `executor.kind`. */
  readonly kind: string
  /** Refuse a launch before anything is created when this executor cannot run it here, limits included (exit 2, with the fix). */
  preflight(limits: UnitLimits): void
  /** True when a new Run waits `queued` until its supervisor starts elsewhere (a pending job). */
  readonly startsQueued: boolean
  /** Start the supervisor of the created Run in `dir` (`created`: its run.json, when the caller has it). */
  start(home: string, dir: string, created?: RunMeta): StartOutcome
  /** A queued Run already handed to an engine that holds it elsewhere (a pending job): it holds its parent's slot. */
  handedOver(meta: RunMeta): boolean
  /** Is the supervisor of a live Run still there; if not, how did the Run end (on every read of a live Run). */
  check(meta: RunMeta): SupervisorCheck
  /**
   * End what is left of a Run whose supervisor is lost, before it is written
   * `exited` (SPEC: Containment): its unit's processes where the executor can
   * reach them. Returns fields for result.json (`resources`, `leftover`).
   */
  endLost(meta: RunMeta): Record<string, unknown>
  /** How often readers re-read the Run's files: undefined when file notifications reach this machine. */
  pollMs(meta: Pick<RunMeta, 'executor'>): number | undefined
  /**
   * Carry a control verb to a Run this machine cannot act on directly (a job
   * on another node); undefined when the kernel's own actions apply here.
   */
  control(home: string, state: RunState, action: string, value: string | undefined): Promise<Record<string, unknown>> | undefined
  /** The supervisor's side of the executor. */
  readonly supervisor: SupervisorSide
}
