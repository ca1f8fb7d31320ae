/**
 * A Run's control journal, `controls.jsonl`: one line per declared-action
 * request, rewritten whole (temp + rename) under `.controls.lock` on every
 * change, so a reader always sees a valid file with unique ids and a record's
 * current status on a single line. Bounded: at most MAX_PENDING records may
 * wait (queued or claimed; one more is backpressure, exit 5), and every write
 * compacts the finished ones down to the last MAX_FINISHED.
 *
 * Services that do not serve a socket poll this file: `listQueuedControls`,
 * then `claimControl` (fenced by the expected status, so two pollers never
 * both win), then `completeControl` with the reply or the error.
 */
import {randomUuid} from '../../base/platform/builtins.js'
import {watchUntil} from '../../base/bell/watch-until.js'
import {join} from 'node:path'
import {notActiveError, refusedError, usageError} from '../../base/platform/errors.js'
import {withLockSync} from '../../base/platform/file-lock.js'
import {readRunMetaRaw, runFile} from '../runs/store.js'
import {isTerminal} from '../../base/records/run.js'
import {readJsonLines, writeFileAtomic} from '../../base/platform/state-files.js'
import {ACTION_PATTERN, MAX_ACTION_CHARS} from '../../base/records/actions.js'
import {MAX_REPLY_BYTES} from '../../base/platform/line-socket.js'

export const MAX_INPUT_BYTES = 4096
export const MAX_PENDING = 64
export const MAX_FINISHED = 128
/** Bound on the journal file we agree to read: pending + finished records at their largest, with room. */
export const MAX_JOURNAL_BYTES = 4 * 1024 * 1024

export type ControlStatus = 'queued' | 'claimed' | 'handled' | 'failed'

export interface ControlRecord {
  id: string
  run_instance_id: string
  action: string
  input?: string
  status: ControlStatus
  queued_at: string
  claimed_at?: string
  handled_at?: string
  /** The service's reply (handled or failed with a reply). */
  reply?: unknown
  error?: string
  /** Who is expected to take it: sent over the socket, or left for a poller. */
  via?: 'socket' | 'journal'
}

const PENDING: readonly ControlStatus[] = ['queued', 'claimed']

export function isPendingControl(record: ControlRecord): boolean {
  return PENDING.includes(record.status)
}

function journalFile(dir: string): string {
  return runFile(dir, 'controls')
}

function journalLock(dir: string): string {
  return join(dir, '.controls.lock')
}

/** Refuse an action name or input that breaks the bounds (exit 2), before anything is written. */
export function validateControlInput(action: string, input: string | undefined): void {
  if (action.length > MAX_ACTION_CHARS) {
    throw usageError(
      `action "${action.slice(0, 40)}…" is ${action.length} characters, over the ${MAX_ACTION_CHARS}-character limit`,
      'use a declared action name',
    )
  }
  if (!ACTION_PATTERN.test(action)) {
    throw usageError(
      `action ${JSON.stringify(action)} is not a valid name`,
      'actions are lowercase letters, digits, "_" and "-", starting with a letter',
    )
  }
  if (input !== undefined && Buffer.byteLength(input) > MAX_INPUT_BYTES) {
    throw usageError(
      `value is ${Buffer.byteLength(input)} bytes, over the ${MAX_INPUT_BYTES}-byte limit`,
      'pass a shorter value, or a path to a file holding the data',
    )
  }
}

/** Every record of the journal, oldest first (missing file → none; unparsable lines are skipped). */
export function readControlRecords(dir: string): ControlRecord[] {
  return readJsonLines<ControlRecord>(journalFile(dir), MAX_JOURNAL_BYTES).records.filter(
    (r) => typeof r.id === 'string' && typeof r.action === 'string' && typeof r.status === 'string',
  )
}

/** Keep every pending record and the last MAX_FINISHED finished ones, in their order. */
function compact(records: ControlRecord[]): ControlRecord[] {
  let finishedToDrop = records.filter((r) => !isPendingControl(r)).length - MAX_FINISHED
  if (finishedToDrop <= 0) return records
  return records.filter((r) => isPendingControl(r) || finishedToDrop-- <= 0)
}

/** Read, change and rewrite the journal under its lock; `change` returns what to hand back. */
function mutateJournal<T>(dir: string, change: (records: ControlRecord[]) => {records?: ControlRecord[]; value: T}): T {
  return withLockSync(journalLock(dir), () => {
    const current = readControlRecords(dir)
    const {records, value} = change(current)
    if (records)
      writeFileAtomic(
        journalFile(dir),
        compact(records)
          .map((r) => JSON.stringify(r) + '\n')
          .join(''),
      )
    return value
  })
}

/**
 * Queue a declared action for the Run in `dir`. The record carries the Run's
 * current generation; a request made against an earlier generation (the Run
 * was relaunched meanwhile) or a finished Run is refused (exit 3), and more
 * than MAX_PENDING waiting records is backpressure (exit 5).
 */
export function appendControlRecord(
  dir: string,
  request: {action: string; input?: string; runInstanceId: string; via?: ControlRecord['via']},
): ControlRecord {
  validateControlInput(request.action, request.input)
  return mutateJournal(dir, (records) => {
    const meta = readRunMetaRaw(dir)
    if (!meta || meta.run_instance_id !== request.runInstanceId) {
      throw notActiveError(
        `Run in ${dir} is now generation ${meta?.run_instance_id ?? '(none)'}, not ${request.runInstanceId}`,
        'the Run was relaunched; address the new generation',
      )
    }
    if (isTerminal(meta.status))
      throw notActiveError(`Run ${meta.run} is ${meta.status}`, 'controls reach live Runs only')
    const pending = records.filter(isPendingControl).length
    if (pending >= MAX_PENDING) {
      throw refusedError(
        `Run ${meta.run} has ${pending} controls waiting (limit ${MAX_PENDING})`,
        'let its service catch up (see controls.jsonl), then retry',
        {pending},
      )
    }
    const record: ControlRecord = {
      id: randomUuid(),
      run_instance_id: request.runInstanceId,
      action: request.action,
      ...(request.input !== undefined ? {input: request.input} : {}),
      status: 'queued',
      queued_at: new Date().toISOString(),
      ...(request.via ? {via: request.via} : {}),
    }
    return {records: [...records, record], value: record}
  })
}

/** One record by id, or undefined. */
export function readControlRecord(dir: string, id: string): ControlRecord | undefined {
  return readControlRecords(dir).find((r) => r.id === id)
}

/** Queued records a polling service may claim, oldest first; only its own generation when given. */
export function listQueuedControls(dir: string, runInstanceId?: string): ControlRecord[] {
  return readControlRecords(dir).filter(
    (r) => r.status === 'queued' && (runInstanceId === undefined || r.run_instance_id === runInstanceId),
  )
}

/**
 * Claim a record for handling: it moves to `claimed` only if its status is
 * still `expectedStatus` (and, when given, it belongs to `runInstanceId`).
 * Returns the claimed record, or undefined when someone else got there first
 * or the record is unknown: the fencing that lets several pollers, or a
 * poller and the socket path, race safely.
 */
export function claimControl(
  dir: string,
  id: string,
  expectedStatus: ControlStatus = 'queued',
  runInstanceId?: string,
): ControlRecord | undefined {
  return mutateJournal(dir, (records) => {
    const index = records.findIndex((r) => r.id === id)
    const current = records[index]
    if (!current || current.status !== expectedStatus) return {value: undefined}
    if (runInstanceId !== undefined && current.run_instance_id !== runInstanceId) return {value: undefined}
    const claimed: ControlRecord = {...current, status: 'claimed', claimed_at: new Date().toISOString()}
    const next = records.slice()
    next[index] = claimed
    return {records: next, value: claimed}
  })
}

/** Serialise a reply, refusing anything over MAX_REPLY_BYTES so the journal stays bounded. */
export function boundedReply(reply: unknown): {reply?: unknown; error?: string} {
  let text: string | undefined
  try {
    text = JSON.stringify(reply)
  } catch {
    return {error: 'reply is not JSON-serialisable'}
  }
  if (text === undefined) return {}
  if (Buffer.byteLength(text) > MAX_REPLY_BYTES)
    return {error: `reply is ${Buffer.byteLength(text)} bytes, over the ${MAX_REPLY_BYTES}-byte limit`}
  return {reply}
}

/**
 * Finish a pending record as `handled` (with the reply) or `failed` (with an
 * error, and the reply when there was one). Only a pending record changes;
 * returns the finished record, or undefined when it was already finished or
 * is unknown (the first completion wins).
 */
export function completeControl(
  dir: string,
  id: string,
  outcome: 'handled' | 'failed',
  detail: {reply?: unknown; error?: string} = {},
): ControlRecord | undefined {
  const bounded = detail.reply === undefined ? {} : boundedReply(detail.reply)
  return mutateJournal(dir, (records) => {
    const index = records.findIndex((r) => r.id === id)
    const current = records[index]
    if (!current || !isPendingControl(current)) return {value: undefined}
    const error = detail.error ?? bounded.error
    const done: ControlRecord = {
      ...current,
      status: bounded.error ? 'failed' : outcome,
      handled_at: new Date().toISOString(),
      ...(bounded.reply !== undefined ? {reply: bounded.reply} : {}),
      ...(error !== undefined ? {error: error.slice(0, 1024)} : {}),
    }
    const next = records.slice()
    next[index] = done
    return {records: next, value: done}
  })
}

/**
 * Wait (at most `timeoutMs`) until the record leaves `queued`/`claimed`,
 * woken by changes to the Run's dir (the journal is replaced by rename),
 * with a slow safety poll. Returns the record as last seen.
 */
export function waitForControlFinished(dir: string, id: string, timeoutMs: number): Promise<ControlRecord | undefined> {
  return watchUntil(
    dir,
    () => readControlRecord(dir, id),
    (record) => !record || !isPendingControl(record),
    {timeoutMs, pollMs: 250},
  )
}
