/**
 * The shapes of a Run's files (SPEC: Run state dir). Field names are the
 * public contract; extra fields are allowed and kept.
 */
import type {ProcessIdentity} from '../platform/process-identity.js'

/** run.json's `executor.kind` when the record is absent (SPEC: Executors): the supervisor runs on this machine. */
export const DEFAULT_EXECUTOR_KIND = 'local'

export const RUN_SCHEMA = 'actors-run-v1'

/** How long a stop waits after SIGTERM before SIGKILL when the Recipe sets no kill_grace. */
export const DEFAULT_KILL_GRACE_MS = 5000

/**
 * The longest kill_grace a stop waits, read back from run.json: the Run can
 * rewrite its record, and a grace of 10^12 ms made `control stop` never return.
 */
export const MAX_KILL_GRACE_MS = 3_600_000

/** The kill_grace of a Run's record, as a stop from outside waits it: a number of ms, 0 to MAX_KILL_GRACE_MS. */
export function recordedKillGraceMs(meta: {kill_grace_ms?: unknown}): number {
  const ms = Number(meta.kill_grace_ms ?? DEFAULT_KILL_GRACE_MS)
  return Number.isFinite(ms) ? Math.min(MAX_KILL_GRACE_MS, Math.max(0, ms)) : DEFAULT_KILL_GRACE_MS
}

export const LIVE_STATUSES = ['queued', 'running', 'paused'] as const
export const TERMINAL_STATUSES = ['done', 'failed', 'cancelled', 'killed', 'exited'] as const
export type LiveStatus = (typeof LIVE_STATUSES)[number]
export type TerminalStatus = (typeof TERMINAL_STATUSES)[number]

/** Whether run.json's `ending` was asked through the kernel's control (`by` is `control` or `control:...`). */
export function askedByControl(ending: unknown): ending is NonNullable<RunMeta['ending']> {
  const by = (ending as {by?: unknown} | null | undefined)?.by
  return typeof by === 'string' && by.startsWith('control')
}

export function isTerminal(status: string): status is TerminalStatus {
  return (TERMINAL_STATUSES as readonly string[]).includes(status)
}

/**
 * Terminal statuses that make `wait` (and a follow) exit 1. `cancelled` is
 * not one: a stop is an outcome someone chose (SPEC: exit codes).
 */
export const FAILING_STATUSES: ReadonlySet<string> = new Set<TerminalStatus>(['failed', 'killed', 'exited'])

/** A Run's generation: run.json's `generation`, 1 when absent (or not a positive whole number). */
export function runGeneration(meta: {generation?: unknown}): number {
  return Number.isSafeInteger(meta.generation) && (meta.generation as number) >= 1 ? (meta.generation as number) : 1
}

export interface ParentRef {
  run: string
  run_instance_id: string
  state_dir: string
}

/** What the supervisor executes: one argv, or several in sequence or in parallel. */
export interface RunPlan {
  mode: 'single' | 'sequence' | 'parallel'
  /** Every command the plan may run, rendered; a `command` node of `tree` points into it. */
  steps: string[][]
  /** Present when the Recipe has `repeat` or `use` steps: the shape the supervisor walks (SPEC: Recipes). */
  tree?: PlanNode
}

/** One node of a plan with `repeat`/`use` steps; `path` is its position, as in `runtime.step` events. */
export type PlanNode =
  | {kind: 'command'; path: string; step: number}
  | {kind: 'sequence' | 'parallel'; path: string; nodes: PlanNode[]}
  | {kind: 'repeat'; path: string; nodes: PlanNode[]; continue_on_failure: boolean}
  | {kind: 'use'; path: string; recipe: string; node: PlanNode}

/** One process the supervisor started, with the identity that guards every signal. */
export interface ChildProcessRecord {
  pid: number
  pgid: number
  identity?: ProcessIdentity
  step: number
}

/**
 * One rule of the launch policy a tree holds (launch/tree-policy.ts): what an
 * `actors mcp` server let its agent launch, recorded in the Run it started
 * and in every Run below it.
 */
export interface PolicyRule {
  /** Who set it, as a refusal names it: `actors mcp --allow hello,demo --owner NAME`. */
  origin: string
  /** Glob patterns of Recipe names that may launch; null: every Recipe. */
  allow: string[] | null
  /** Whether ad-hoc commands (and Recipe files outside recipe_roots) may launch. */
  allow_adhoc: boolean
  owner: string
  /** The server's recipe roots: a Recipe launched in the tree must be the one these give for its name. */
  recipe_roots: string[]
  /** The Run the rule entered the tree with. */
  run?: string
}

/** run.json `seed` of a forked child, and the data of its `runtime.seeded` event. */
export interface SeedRecord {
  from_run: string
  from_run_instance_id: string
  from_generation: number
  /** How many messages the child's inbox started with. */
  messages: number
  /** The parent's inbox record id of the newest message copied (null: none were). */
  until_message_id: string | null
}

export interface RunMeta {
  schema: typeof RUN_SCHEMA
  run: string
  run_instance_id: string
  recipe: string | null
  recipe_file: string | null
  values: Record<string, unknown>
  argv: string[]
  plan: RunPlan
  cwd: string
  env: Record<string, string>
  created_at: string
  started_at?: string
  status: LiveStatus | TerminalStatus
  /** The supervisor's pid and identity. */
  pid?: number
  process_identity?: ProcessIdentity
  /** The current (first live) command process and its group. */
  child_pid?: number
  pgid?: number
  children_processes?: ChildProcessRecord[]
  /** When the current attempt started: a supervisor that adopts the Run enforces what is left of its timeout. */
  attempt_started_at?: string
  /** When a reader last started a supervisor to take the Run over from a lost one (executors/take-over.ts). */
  adopted_at?: string
  /** When a reader last started a lost Run that had never started its command afresh (executors/take-over.ts). */
  restarted_at?: string
  owner: string
  parent?: ParentRef
  root: string
  depth: number
  control: string[]
  notification: 'normal' | 'silent'
  timeout_ms?: number
  retry: number
  kill_grace_ms: number
  artifacts?: Record<string, string>
  singleton?: boolean
  max_parallel?: number
  budget_tokens?: number
  /** The depth limit this Run was launched under: ACTORS_MAX_DEPTH, never above an ancestor's (runs/tightened-limits.ts). */
  max_depth?: number
  /** The launch policy this Run and every launch below it are held to (launch/tree-policy.ts); all rules must allow. */
  policy?: PolicyRule[]
  /** Which launch of this Run id this is (SPEC: Generations and steering); absent = 1. */
  generation?: number
  /** How `actors send` reaches a live Run: one line on the command's stdin, or its inbox.jsonl. */
  inbox?: 'stdin' | 'file'
  /** false: a finished Run refuses to be resumed by `actors send`. */
  resume?: boolean
  /** The message that resumed this generation (ACTORS_MESSAGE), with its inbox record id. */
  message?: {id: string; text: string}
  /** A child launched with --fork: whose inbox messages its inbox started with (launch/fork.ts). */
  seed?: SeedRecord
  /**
   * Set by control: why the Run is ending (so the supervisor records cancelled/killed). `asked_from`: whether the
   * caller was outside the Run's own tree (runs/end-request.ts); only such an end leaves the Run out of wait rows.
   */
  ending?: {status: 'cancelled' | 'killed'; at: string; by: string; asked_from?: 'outside' | 'inside'}
  /** Where the supervisor runs: `{kind: "local"}` or a Slurm record (executors/). */
  executor?: unknown
  /** true: every waking attention event of this Run raises attention.flag before it is appended (runs/trace.ts attentionFlagged). */
  attention_flag?: boolean
  /**
   * Once the Run ended (with attention_flag): whether attention.flag was there. A waking event emitted after the
   * end sets it true before it is appended, so a finished Run saying false asked for nothing (runs/trace.ts).
   */
  attention_raised?: boolean
  /** Mirrored from result.json at the end (store.ts writeResultLocked): how it ended, its first artifacts and how many it made. */
  reason?: string | null
  artifacts_head?: ArtifactRecord[]
  artifacts_total?: number
  /** `actors close` retired the Run id: no new generation, no adoption (runs/closed.ts). */
  closed?: boolean
  closed_at?: string
  [extra: string]: unknown
}

export interface ArtifactRecord {
  name: string
  path: string
  bytes: number | null
  sha256: string | null
  missing?: boolean
  /** Why `sha256` is null for a file that is there: over the hashing limit (kernel/runs/artifacts.ts). */
  hash_skipped?: 'too_large'
}

export interface RunResult {
  status: TerminalStatus
  exit_code: number | null
  signal: string | null
  reason: string | null
  attempts: number
  started_at: string | null
  completed_at: string
  duration_ms: number | null
  artifacts: ArtifactRecord[]
  run_instance_id: string
  [extra: string]: unknown
}
