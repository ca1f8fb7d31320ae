/**
 * The Run records its own end (SPEC: Supervision): its unit's wrapper stays
 * the parent of the command and, when the command ends, writes its exit
 * status into the state dir (`exit-<step>.json`), so
 * whoever finds the Run after its supervisor was killed can still write the
 * exact end. The record names the Run instance, generation, attempt and step
 * it is about: one left from another attempt, or forged for another Run, is
 * never taken for this one. It is the Run's claim about its own end (it
 * chose its exit code anyway) and is read only when no live supervisor saw
 * the end itself.
 *
 * A POSIX sh sees a command killed by signal N as status 128+N: the wrapper
 * writes that, then dies of the same signal, so a live supervisor sees the
 * signal as before. A command that exits 128+N by itself (N a signal that
 * kills by default) reads as killed by N: the one ambiguity.
 */
import {constants} from 'node:os'
import {join} from 'node:path'
import {readJsonFile} from '../../base/platform/state-files.js'
import {generationOf} from '../../base/records/generation-layout.js'
import type {RunMeta} from '../../base/records/run.js'

/** Signals whose default action ends a process: 128+N from sh is read as death by N. */
const DEADLY = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 24, 25, 26, 27, 29, 30, 31]

/**
 * `sh -c RECORD_END actors-run FILE TAG DEADLINE TIMEOUT GRACE ARGV...`: run ARGV
 * as a child, write `TAG<status>}` to FILE when it ends, then end as it did.
 * DEADLINE (ms since the epoch) and TIMEOUT (ms) are the attempt's, `0` for
 * none, and GRACE the launch's kill grace (ms, `-` for none): unused by the script, they stay on the wrapper's command line, where
 * the command it runs cannot rewrite them, for whoever takes a lost Run over
 * (run-deadline.ts). The traps are
 * handlers (`:`), never an ignore: a handler is reset by exec, so the
 * command starts with the dispositions it would have had; they keep the
 * wrapper alive through the signals sent to the whole unit or group (a stop,
 * a timeout, an interrupt), which reach the command too.
 */
export const RECORD_END = [
  'f=$1; t=$2; shift 5; trap : HUP INT QUIT TERM USR1 USR2 ALRM',
  '"$@"; s=$?',
  // umask 077 only now: the command ran with the umask it was given; the record is private (0600) as every state file.
  // Written in place, with no temp file and `mv` (a process start, about 2 ms of every end): no reader takes the
  // record while the wrapper, a process of the unit, lives. The supervisor removed it before the start, so what is
  // there now the Run put there: noclobber creates the file exclusively (never through a link), and a FIFO or
  // anything else found there is left as it is, unopened, so the wrapper cannot block on it.
  'umask 077; set -C; [ -e "$f" ] || printf "%s%d}\\n" "$t" $s 2>/dev/null >"$f"',
  `case $((s-128)) in ${DEADLY.join('|')}) trap - $((s-128)); kill -$((s-128)) $$;; esac`,
  'exit $s',
].join('; ')

/** Which end of which command a record is about. */
export interface EndRecordKey {
  run_instance_id: string
  generation: number
  attempt: number
  step: number
}

const SCHEMA = 'actors.exit/1'

/** The file the wrapper of step `step` writes. */
export function endRecordFile(dir: string, step: number): string {
  return join(dir, `exit-${step}.json`)
}

/** The record's head, up to its status: the wrapper appends the status and the closing brace. */
export function endRecordTag(key: EndRecordKey): string {
  const head = JSON.stringify({schema: SCHEMA, ...key, status: 0})
  return head.slice(0, head.lastIndexOf('0}'))
}

/**
 * The end recorded for `key` in `dir`: the exit code, or the signal that
 * ended the command; undefined when there is none for exactly this key
 * (missing, damaged, a link, another Run's, generation's, attempt's or step's).
 */
export function readEndRecord(
  dir: string,
  key: EndRecordKey,
): {exitCode: number | null; signal: NodeJS.Signals | null} | undefined {
  let record: Record<string, unknown> | undefined
  try {
    record = readJsonFile(endRecordFile(dir, key.step), {schema: SCHEMA, maxBytes: 4096, oftenMissing: true})
  } catch {
    return undefined
  }
  if (!record) return undefined
  for (const [name, value] of Object.entries(key)) if (record[name] !== value) return undefined
  const status = record.status
  if (typeof status !== 'number' || !Number.isInteger(status) || status < 0 || status > 255) return undefined
  if (DEADLY.includes(status - 128)) return {exitCode: null, signal: signalName(status - 128)}
  return {exitCode: status, signal: null}
}

function signalName(number: number): NodeJS.Signals | null {
  const found = Object.entries(constants.signals).find(([, n]) => n === number)
  return (found?.[0] as NodeJS.Signals | undefined) ?? null
}

/** What run.json says of the plan and where the attempt is, for reading its recorded end. */
type PlanMeta = Pick<RunMeta, 'run_instance_id' | 'generation' | 'plan' | 'retry' | 'children_processes'> & {
  attempts?: unknown
}

/** The attempt run.json records as under way (1 before the first was recorded). */
export function currentAttempt(meta: PlanMeta): number {
  const attempt = Number(meta.attempts)
  return Number.isInteger(attempt) && attempt > 0 ? attempt : 1
}

/** The steps the current attempt awaits: every step of a parallel plan, else the last one started. */
export function currentSteps(meta: PlanMeta): number[] {
  const {mode, steps, tree} = meta.plan
  if (!tree && mode === 'parallel') return steps.map((_, index) => index)
  const records = Array.isArray(meta.children_processes) ? meta.children_processes : []
  const started = records.map((r) => Number(r?.step)).filter((step) => Number.isInteger(step) && step >= 0)
  return [started.length > 0 ? Math.max(...started) : 0]
}

export interface RecordedEnd {
  exitCode: number | null
  signal: NodeJS.Signals | null
  /** The step whose end it is (a sequence goes on with the next). */
  step: number
}

/** The recorded end of the current attempt's steps (the first that failed, else the last); undefined unless all are recorded. */
export function recordedAttemptEnd(meta: PlanMeta, dir: string): RecordedEnd | undefined {
  let end: RecordedEnd | undefined
  for (const step of currentSteps(meta)) {
    const key = {
      run_instance_id: meta.run_instance_id,
      generation: generationOf(meta),
      attempt: currentAttempt(meta),
      step,
    }
    const found = readEndRecord(dir, key)
    if (!found) return undefined
    if (!end || end.exitCode === 0) end = {...found, step}
  }
  return end
}

/**
 * What the plan does after `end`: `continue` (a sequence's next step, or
 * another attempt), `end` (the Run's end is this one), or `unknown` (a plan
 * of repeat/use steps, whose walk lived in the lost supervisor).
 */
export function afterRecordedEnd(meta: PlanMeta, end: RecordedEnd): 'continue' | 'end' | 'unknown' {
  const {mode, steps, tree} = meta.plan
  if (tree) return 'unknown'
  if (end.exitCode === 0) return mode !== 'parallel' && end.step < steps.length - 1 ? 'continue' : 'end'
  return currentAttempt(meta) < Math.max(1, Number(meta.retry) || 1) ? 'continue' : 'end'
}
