/**
 * The executor seam (SPEC: Executors; docs/executors.md): where a Run's
 * supervisor runs, and every question and verb whose answer depends on that.
 * Each engine implements the whole interface (local.ts, slurm-executor.ts);
 * no file outside executors/ branches on an executor's kind, it asks the
 * Run's executor (index.ts: executorOf).
 */
import type {RunMeta} from '../../base/records/run.js'
import type {SupervisorCheck} from '../../base/records/supervisor-check.js'
import type {RunState} from '../runs/store.js'
import type {UnitLimits, UnitUsage} from '../containment/unit.js'
import type {EndMode, RuntimeActionResult} from '../signals/runtime-actions.js'
import type {EndOptions} from '../signals/end-run.js'
import type {InterruptResult} from '../signals/interrupt.js'
import type {Zod} from '../../base/platform/zod.js'
import type {SomeType} from 'zod/v4/core'

/** A launch's choice of executor, as run.json's `executor` record starts: the kind and that kind's options. */
export interface ExecutorChoice {
  kind: string
  [option: string]: unknown
}

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

/**
 * An engine whose jobs can hold local Runs: a Run launched on the local
 * executor inside one of its jobs lives on that job's node, and no longer
 * than the job (local.ts asks the engine from every other machine).
 */
export interface JobHost {
  /** What a local launch inside one of this engine's jobs records of the job (its id); undefined outside one. */
  jobOf(env: NodeJS.ProcessEnv): Record<string, string> | undefined
  /** A local Run that recorded one of this engine's jobs, checked from another machine; undefined when it recorded none. */
  checkJobOf(meta: RunMeta): SupervisorCheck | undefined
}

export interface Executor {
  /** run.json's `executor.kind`. */
  readonly kind: string
  /** The schema of each field a Recipe's `executor: {kind: <this kind>, ...}` may set besides `kind` (choice.ts). */
  recipeOptions(z: Zod): Record<string, SomeType>
  /** The `executor` record of a launch on this executor; `recipe`: the Recipe's choice when it names this kind too. */
  choose(recipe: ExecutorChoice | undefined, env: NodeJS.ProcessEnv): ExecutorChoice
  /** Refuse a launch before anything is created when this executor cannot run it here, limits included (exit 2, with the fix). */
  preflight(limits: UnitLimits): void
  /** True when a new Run waits `queued` until its supervisor starts elsewhere (a pending job). */
  readonly startsQueued: boolean
  /** Start the supervisor of the created Run in `dir` (`created`: its run.json, when the caller has it). */
  start(home: string, dir: string, created?: RunMeta): StartOutcome
  /** A queued Run already handed to an engine that holds it elsewhere (a pending job): it holds its parent's slot. */
  handedOver(meta: RunMeta): boolean
  /** Is the supervisor of a live Run still there; if not, how did the Run end (on every read of a live Run). */
  check(meta: RunMeta, dir: string): SupervisorCheck
  /**
   * End what is left of a Run whose supervisor is lost, before it is written
   * `exited` (SPEC: Containment): its unit's processes where the executor can
   * reach them. Returns fields for result.json (`resources`, `leftover`).
   * `dir`: the state dir the kernel read it from (its name names the unit).
   */
  endLost(meta: RunMeta, dir: string): Record<string, unknown>
  /** A lost Run taken over (runs/executor-questions.ts takeOver); absent where the executor cannot. */
  takeOver?(meta: RunMeta, dir: string): {adopted: RunMeta} | {result: Record<string, unknown>} | undefined
  /** CPU and memory of a live Run now, as far as this machine can read them; undefined when nothing of it can be read. */
  usage(meta: RunMeta): UnitUsage | undefined
  /** How often readers re-read the Run's files: undefined when file notifications reach this machine. */
  pollMs(meta: Pick<RunMeta, 'executor'>): number | undefined
  /**
   * Carry a whole control request (any action, declared ones included) to a
   * Run this machine cannot act on (a job on another node), where the same
   * `actors control` runs; undefined when this machine acts on the Run
   * itself, through the verbs below.
   */
  relay(
    home: string,
    state: RunState,
    action: string,
    value: string | undefined,
  ): Promise<Record<string, unknown>> | undefined
  /** Freeze or thaw all of the live Run's processes (its containment unit). */
  pauseOrResume(home: string, state: RunState, action: 'pause' | 'resume'): RuntimeActionResult
  /**
   * Before a stop or kill touches the Run's tree: refuse (exit 3) when its
   * recorded command processes are not the processes they were.
   */
  checkEnd(meta: RunMeta): void
  /** Stop (TERM, KILL after its grace) or kill the Run in `dir`, wherever its supervisor runs; a tree's cascade ends each descendant so. */
  end(home: string, dir: string, mode: EndMode, options?: EndOptions): Promise<RuntimeActionResult>
  /** End what a finished Run left running (its supervisor was lost); undefined when nothing was left. */
  endLeftovers(home: string, dir: string, mode: EndMode): Promise<RuntimeActionResult | undefined>
  /** Pause or resume what a finished Run's record leaves running (it wrote its own end); undefined when nothing runs. */
  pauseLeftovers(home: string, dir: string, action: 'pause' | 'resume'): RuntimeActionResult | undefined
  /** SIGINT to the live Run's command (`fallback`: why the kernel stands in for the Run's service). */
  interrupt(dir: string, fallback?: string): InterruptResult
  /** Where the Run runs, for listings: '' for this machine, `slurm 12@node1` for a job (its id and node once known). */
  describe(run: {job_id?: string | null; node?: string | null}): string
  /** Why a queued Run of this executor has not started, in the engine's words (`Slurm job 12 PENDING: Resources`); undefined: nothing to add. */
  queuedWhy(run: {job_id?: string | null}): string | undefined
  /** The supervisor's side of the executor. */
  readonly supervisor: SupervisorSide
}

/** `KIND JOB@NODE`, each part once known: how a listing names where a Run in an engine's job runs. */
export function jobWhere(kind: string, run: {job_id?: string | null; node?: string | null}): string {
  return `${kind}${run.job_id ? ` ${run.job_id}` : ''}${run.node ? `@${run.node}` : ''}`
}
