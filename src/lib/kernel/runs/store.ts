/**
 * Reading and writing one Run's files, with reconciliation on every read: a
 * Run whose supervisor vanished without writing a result is taken over (a new
 * supervisor adopts it, or the end its unit recorded is written), or settled
 * as `exited` when its unit ended with no recorded end, the moment anyone
 * looks at it. A read
 * only settles files and starts nothing: the follow-ups of that end are noted
 * in ended-runs.ts and run later, outside every lock (after-run.ts).
 */
import {existsSync, lstatSync} from 'node:fs'
import {dirname, join, sep} from 'node:path'
import {archiveAndStartLocked, completeMove} from './generation-move.js'
import {releaseEndReserve, withEndReserve} from './end-reserve.js'
import {addIndexMarker, keepIndexed} from './index-entry.js'
import {noteEndedRun} from '../../base/records/ended-runs.js'
import {corruptStateError, isActorsError, notFoundError} from '../../base/platform/errors.js'
import {refuseLinkedRuns, runDir, runsDir} from '../../base/platform/home.js'
import {withLockSync} from '../../base/platform/file-lock.js'
import {refuseLinkedDir} from '../../base/platform/private-files.js'
import {askExecutor} from './executor-questions.js'
import type {SupervisorCheck} from '../../base/records/supervisor-check.js'
import {readJsonFile, unlinkQuietly, writeJsonAtomic} from '../../base/platform/state-files.js'
import {notifyStateChange} from '../../base/bell/notify.js'
import {checkRunMeta} from './meta-checks.js'
import {
  askedByControl,
  RUN_SCHEMA,
  isTerminal,
  type RunMeta,
  type RunResult,
  type TerminalStatus,
} from '../../base/records/run.js'

export const RUN_FILES = {
  meta: 'run.json',
  result: 'result.json',
  trace: 'trace.jsonl',
  controls: 'controls.jsonl',
  stdout: 'stdout.log',
  stderr: 'stderr.log',
  endpoint: 'control-endpoint.json',
  lock: '.lock',
  children: 'children.jsonl',
  usage: 'usage.json',
  reported: 'reported.json',
  attention: 'attention.flag',
} as const

export function runFile(dir: string, name: keyof typeof RUN_FILES): string {
  // Plain concatenation: state dirs are already normalised, and listings build thousands of these.
  return dir.endsWith(sep) ? dir + RUN_FILES[name] : dir + sep + RUN_FILES[name]
}

/** Read run.json as it is on disk (no reconciliation); undefined when absent. */
export function readRunMetaRaw(dir: string): RunMeta | undefined {
  const meta = readJsonFile<RunMeta>(runFile(dir, 'meta'), {schema: RUN_SCHEMA})
  if (meta) checkRunMeta(meta, dir, runFile(dir, 'meta'))
  return meta
}

/**
 * run.json of the Run `id` (no reconciliation), reached by its id from a
 * record (a parent, an ancestor, the caller's ACTORS_RUN): never through a
 * link in its state dir's place (LinkedPathError, exit 1).
 */
export function readRunMetaById(home: string, id: string): RunMeta | undefined {
  const dir = runDir(home, id)
  refuseLinkedDir(dir)
  return readRunMetaRaw(dir)
}

/** Read result.json of the Run's current generation, if written. */
export function readRunResult(dir: string, meta?: Pick<RunMeta, 'run_instance_id'>): RunResult | undefined {
  let result: RunResult | undefined
  try {
    result = readJsonFile<RunResult>(runFile(dir, 'result'))
  } catch (error) {
    // The kernel writes result.json as a file, only: a link, directory or FIFO made in its place is no end (the
    // writer of the real one replaces it or moves it aside, state-files.ts), and must not make the Run unknown to a
    // wait, nor unreadable to inspect, meanwhile.
    if (!isNoFile(runFile(dir, 'result'))) throw error
    return undefined
  }
  if (!result) return undefined
  if (typeof result.status !== 'string' || !isTerminal(result.status)) {
    throw corruptStateError(runFile(dir, 'result'), `has unknown status ${JSON.stringify(result.status)}`)
  }
  // A result left over from an earlier launch of the same id is not this Run's.
  if (meta && result.run_instance_id && result.run_instance_id !== meta.run_instance_id) return undefined
  return result
}

/** Something at `file` that is no regular file: a link, directory, FIFO, socket or device (a damaged file is named). */
function isNoFile(file: string): boolean {
  const stat = lstatSync(file, {throwIfNoEntry: false})
  return stat !== undefined && !stat.isFile()
}

/** What a result.json already in `dir` claims (its status), or why it is none; undefined when there is none. */
export function resultClaim(dir: string, meta: Pick<RunMeta, 'run_instance_id'>): string | undefined {
  try {
    return readRunResult(dir, meta)?.status
  } catch (error) {
    return (error as Error).message
  }
}

export interface RunState {
  dir: string
  meta: RunMeta
  result?: RunResult
}

/**
 * Update run.json under the Run's lock; `change` gets the current document and
 * returns the next one, or undefined to leave the file untouched. Always
 * atomic (rename); `durable: false` skips the fsync, for facts that mean
 * nothing after a crash of the machine (a process's pid and identity).
 */
export function updateRunMeta(
  dir: string,
  change: (meta: RunMeta) => RunMeta | undefined,
  options: {durable?: boolean} = {},
): RunMeta | undefined {
  return withLockSync(runFile(dir, 'lock'), () => {
    const meta = readRunMetaRaw(dir)
    if (!meta) return undefined
    const next = change(meta)
    if (next) writeRunMetaLocked(dir, next, options)
    return next ?? meta
  })
}

/**
 * Replace run.json atomically (`durable: false`: without fsync, see updateRunMeta).
 * Caller must hold the Run's lock (updateRunMeta does; so do the control actions).
 */
export function writeRunMetaLocked(dir: string, meta: RunMeta, options: {durable?: boolean} = {}): void {
  writeJsonAtomic(runFile(dir, 'meta'), meta, options)
}

/**
 * Write the run.json of a new Run, or of a Run id's next generation (after
 * `previous`, which is archived: generation-move.ts), together with its
 * entry in the run index: the entry first, so a live command finds the Run
 * from before it can end (index-entry.ts). The one call that creates both.
 * Caller holds the Run's lock.
 */
export function writeNewRunLocked(home: string, dir: string, meta: RunMeta, previous?: RunMeta): void {
  // Room for the end first: a disk too full for it refuses the launch before the Run exists anywhere.
  withEndReserve(dir, JSON.stringify(meta).length, () => {
    addIndexMarker(home, meta.run, meta.run_instance_id)
    if (previous) archiveAndStartLocked(dir, previous, meta)
    else writeJsonAtomic(runFile(dir, 'meta'), meta)
  })
}

/** Artifact records run.json mirrors at the end: what a batch row shows (wait/batch.ts MAX_ROW_ARTIFACTS). */
export const MIRRORED_ARTIFACTS = 4

/**
 * Write result.json exactly once per generation and mirror the terminal status
 * into run.json. Returns false when a result already existed (someone else won).
 * `replace`: the Run's own supervisor, which knows it wrote none, records the
 * real end over one it found (the Run wrote it; supervise.ts finish).
 * Caller must hold the Run's lock.
 */
export function writeResultLocked(dir: string, meta: RunMeta, result: RunResult, replace = false): boolean {
  // Replacing, what is there is not read at all: garbage the Run (or a child) wrote must not stop the real end.
  if (!replace && readRunResult(dir, meta)) return false
  // No wait delivers an end before it is written (wait/proven-ends.ts): a reported mark already here is the Run's own,
  // made to keep its end from its owner.
  unlinkQuietly(runFile(dir, 'reported'))
  keepIndexed(join(dir, '..', '..'), meta.run, meta.run_instance_id)
  releaseEndReserve(dir) // the room kept since the launch (end-reserve.ts): the end fits on a full disk
  writeJsonAtomic(runFile(dir, 'result'), result)
  // Mirror the essentials into run.json so listings read one file per Run, and a batch row (wait/batch.ts) needs no
  // result.json: a bounded head of the artifacts, whose records can be many. And whether the Run asked for
  // attention, so a wait delivering it need not look for the flag (runs/trace.ts attentionFlagged).
  const artifacts = Array.isArray(result.artifacts) ? result.artifacts : []
  mirrorIntoMeta(dir, {
    ...meta,
    status: result.status,
    ended_at: result.completed_at,
    exit_code: result.exit_code,
    duration_ms: result.duration_ms,
    reason: result.reason,
    artifacts_head: artifacts.slice(0, MIRRORED_ARTIFACTS),
    artifacts_total: artifacts.length,
    ...(result.resources ? {resources: result.resources} : {}),
    // A budget crossing (runs/tree-limits.ts budgetMark) shows on the Run's batch row, read from here.
    ...(result.budget_exceeded === true ? {budget_exceeded: true} : {}),
    ...(meta.attention_flag === true ? {attention_raised: existsSync(runFile(dir, 'attention'))} : {}),
  })
  notifyStateChange(join(dir, '..', '..'))
  return true
}

/**
 * Write the end's mirror into run.json; one the Run damaged (a link, a value
 * too deep), or a disk with no room (or no inode) left for the new copy,
 * keeps it out: result.json says.
 */
function mirrorIntoMeta(dir: string, meta: RunMeta): void {
  try {
    writeJsonAtomic(runFile(dir, 'meta'), meta)
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (!isActorsError(error) && code !== 'ENOSPC' && code !== 'EDQUOT') throw error
  }
}

/** Build a result for a Run that ended without its supervisor saying how. */
export function settledResult(meta: RunMeta, status: TerminalStatus, reason: string): RunResult {
  const completed = new Date()
  const started = meta.started_at ?? null
  return {
    status,
    exit_code: null,
    signal: null,
    reason,
    attempts: Number(meta.attempts ?? 0),
    started_at: started,
    completed_at: completed.toISOString(),
    duration_ms: started ? Math.max(0, completed.getTime() - Date.parse(started)) : null,
    artifacts: [],
    run_instance_id: meta.run_instance_id,
  }
}

/** How readRunState reads a state dir. */
export interface ReadRunOptions {
  /** false: skip result.json of a terminal Run (run.json mirrors status, exit code and duration). */
  withResult?: boolean
  /**
   * Refuse a link in the state dir's place (lstat) before reading: for a
   * dir reached by its id from a record (the run index, the launch log, a
   * children journal, a parent's id), not from a listing of runs/, which
   * knows each entry's type already (listRunEntries).
   */
  refuseLink?: boolean
}

/**
 * Read a Run's meta and result, settling it when its supervisor is gone
 * without a result (its executor says how: `exited` for a vanished local
 * supervisor; for a Slurm job, see executors/slurm.ts). The settle happens
 * under the Run's lock and re-checks, so a supervisor finishing at the same
 * moment always wins.
 */
export function readRunState(dir: string, options: ReadRunOptions = {}): RunState | undefined {
  // O_NOFOLLOW guards a state file's last part only: the dir above it is checked here when asked.
  if (options.refuseLink) refuseLinkedDir(dir)
  let meta = readRunMetaRaw(dir)
  if (!meta) return undefined
  // A generation move that crashed after its commit is finished before anyone reads the Run's files.
  if (meta.generation_move) {
    completeMove(dir)
    meta = readRunMetaRaw(dir)
    if (!meta) return undefined
  }
  if (isTerminal(meta.status)) {
    return {dir, meta, result: options.withResult === false ? undefined : readRunResult(dir, meta)}
  }
  const {result} = claimedResult(dir, meta)
  // Executors: the Run's executor answers whether its supervisor is alive (executors/index.ts). A result.json under
  // a run.json not finished stands while it is: it writes result.json, then run.json, and replaces a result it did
  // not write. With it gone, the Run is taken over like any lost one (reconcileLostRun): one that wrote its own
  // result.json and killed its supervisor was left ended in name, its command running on past its timeout.
  const check = askExecutor().check(meta, dir)
  if (check.alive && result) return {dir, meta: {...meta, status: result.status}, result}
  if (check.alive) return {dir, meta: check.status ? {...meta, status: check.status} : meta}
  if (!result) return reconcileLostRun(dir)
  try {
    return reconcileLostRun(dir)
  } catch (error) {
    // No room for the lock a take-over takes (a Run used up the disk's inodes, and its supervisor wrote result.json
    // but had none left for run.json): the result stands, as it did before any reader could act on it.
    const code = (error as NodeJS.ErrnoException).code
    if (code !== 'ENOSPC' && code !== 'EDQUOT') throw error
    return {dir, meta: {...meta, status: result.status}, result}
  }
}

function reconcileLostRun(dir: string): RunState | undefined {
  // Settling writes: never through a link in the state dir's place.
  refuseLinkedDir(dir)
  let settled: RunMeta | undefined
  const state = withLockSync(runFile(dir, 'lock'), (): RunState | undefined => {
    const meta = readRunMetaRaw(dir)
    if (!meta) return undefined
    if (isTerminal(meta.status)) return {dir, meta, result: readRunResult(dir, meta)}
    const {result: existing, damaged} = claimedResult(dir, meta)
    const check: SupervisorCheck = askExecutor().check(meta, dir)
    if (check.alive) return {dir, meta: check.status ? {...meta, status: check.status} : meta}
    // A lost supervisor is not a lost Run: a new one adopts it, or its own recorded end is its result. So is one
    // that left a result.json: a Run (or a neighbour) that writes one and kills the supervisor has a unit still
    // running, which is adopted (its timeout holds), or a unit that recorded another end, which is the end.
    const taken = check.reason === 'supervisor_lost' ? askExecutor().takeOver(meta, dir) : undefined
    if (taken && 'adopted' in taken) return {dir, meta: taken.adopted}
    // Otherwise a result already here stands: its supervisor's, lost between its two writes, or a claim nothing
    // contradicts.
    if (existing && (!taken || sameEnd(existing, taken.result)))
      return {dir, meta: {...meta, status: existing.status}, result: existing}
    const status = (taken?.result.status as TerminalStatus | undefined) ?? askedEnding(meta) ?? check.status
    // [containment] The lost supervisor's command is ended first: only then is the Run settled and its locks free.
    const result = {
      ...settledResult(meta, status, check.reason),
      ...check.details,
      ...askExecutor().endLost(meta, dir),
      ...taken?.result,
    }
    // What it replaces is named in it: the claim, as the supervisor's trace names one (runtime.result_replaced).
    if (existing)
      Object.assign(result, {replaced_result: {status: existing.status, exit_code: existing.exit_code ?? null}})
    if (writeResultLocked(dir, meta, result, existing !== undefined || damaged)) settled = {...meta, status}
    return {dir, meta: {...meta, status}, result}
  })
  // Reads may run under other locks (a parent's children lock): the follow-ups
  // of this end (queued siblings start) are only noted, and run outside every lock.
  if (settled) noteEndedRun(dirname(dirname(dir)), settled)
  return state
}

/**
 * The result.json of a Run whose run.json is not finished: its supervisor's end, or a claim (the Run's, or a
 * neighbour's). One that cannot be read (garbage, oversized, an unknown status such as "running") is `damaged`: no
 * end, and nothing that keeps the Run from being taken over; its end replaces it (red-team 17 N17-17: a Run that
 * damaged it and killed its supervisor ran on past its timeout, listed `damaged`, unknown to `wait`).
 */
function claimedResult(dir: string, meta: RunMeta): {result?: RunResult; damaged: boolean} {
  try {
    return {result: readRunResult(dir, meta), damaged: false}
  } catch (error) {
    if (!isActorsError(error)) throw error
    return {damaged: true}
  }
}

/** Whether a result.json found and the end a take-over found say the same: status, exit code and signal. */
function sameEnd(existing: RunResult, found: Record<string, unknown>): boolean {
  return (
    existing.status === found.status &&
    (existing.exit_code ?? null) === (found.exit_code ?? null) &&
    (existing.signal ?? null) === (found.signal ?? null)
  )
}

/**
 * The end a control asked for (run.json `ending`, written under the Run's
 * lock before its first signal) of a Run whose supervisor went before
 * recording it: that stop or kill is what ended the Run. A parent's stop
 * signals its child's supervisor too, and one still starting (no handler
 * yet) dies of the SIGTERM its child's own stop was about to answer.
 */
function askedEnding({ending}: RunMeta): TerminalStatus | undefined {
  return askedByControl(ending) && (ending.status === 'cancelled' || ending.status === 'killed')
    ? ending.status
    : undefined
}

/** Read a Run by id, or throw "not found" (exit 4). */
export function requireRun(home: string, id: string): RunState {
  const dir = runDir(home, id)
  // Commands on one Run (emit, control, ...) never act through a link in its state dir's place, nor in runs/'s.
  refuseLinkedRuns(home)
  refuseLinkedDir(dir)
  const state = readRunState(dir)
  if (!state) throw notFoundError(`Run ${id} not found in ${runsDir(home)}`)
  return state
}

import {listRunEntries} from './run-dirs.js'

export {listRunEntries, listRunIds, listRunNames, type RunEntries} from './run-dirs.js'

export interface ListedRun extends RunState {
  /** Set instead of meta when the Run's files could not be read. */
  error?: string
}

/**
 * Read every Run (reconciling), skipping half-created dirs; damaged ones,
 * and entries of runs/ that are no directory (a link), are reported, not
 * fatal. `withResult: false` skips result.json of terminal Runs (run.json
 * mirrors status, exit code and duration) to keep listings fast.
 */
export function listRuns(home: string, options: ReadRunOptions = {}): ListedRun[] {
  const base = runsDir(home)
  const {ids, strays} = listRunEntries(home)
  const runs: ListedRun[] = strays.map((stray) => damagedRun(stray.dir, stray.error))
  for (const id of ids) {
    const state = readListedRun(base + sep + id, options)
    if (state) runs.push(state)
  }
  return runs
}

/** One Run of a listing: its state, an `error` instead when its files are damaged, undefined while half-created. */
export function readListedRun(dir: string, options: ReadRunOptions = {}): ListedRun | undefined {
  try {
    return readRunState(dir, options)
  } catch (error) {
    return damagedRun(dir, (error as Error).message)
  }
}

const damagedRun = (dir: string, error: string): ListedRun => ({dir, meta: undefined as unknown as RunMeta, error})
