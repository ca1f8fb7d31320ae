/**
 * What a run.json must be before the kernel reads it as a Run's record
 * (SPEC: state files fail closed). A Run can rewrite its own run.json, so
 * these checks refuse what would make the kernel act on the wrong thing:
 * fields missing or of a status no kernel writes, a Run id other than its
 * dir's (a Run naming itself after another, to take its place in tables and
 * replies), and process records that are not records.
 */
import {basename, dirname} from 'node:path'
import {corruptStateError} from '../../base/platform/errors.js'
import {LIVE_STATUSES, TERMINAL_STATUSES, type RunMeta} from '../../base/records/run.js'

const KNOWN_STATUSES: readonly string[] = [...LIVE_STATUSES, ...TERMINAL_STATUSES]

/** Throw (exit 1, naming `file`) unless `meta`, read from `file` in the state dir `dir`, can be taken as a Run's record. */
export function checkRunMeta(meta: RunMeta, dir: string, file: string): void {
  if (typeof meta.run !== 'string' || typeof meta.status !== 'string' || typeof meta.run_instance_id !== 'string')
    throw corruptStateError(file, 'is missing run, run_instance_id or status')
  // A top-level state dir's name is its Run's id (an archived generation's dir is its number).
  if (meta.run !== basename(dir) && basename(dirname(dir)) === 'runs')
    throw corruptStateError(file, `names the Run ${JSON.stringify(meta.run)}, not ${basename(dir)}, whose dir it is in`)
  if (!KNOWN_STATUSES.includes(meta.status))
    throw corruptStateError(file, `has unknown status ${JSON.stringify(meta.status)}`)
  // Control and reconciliation trust these records to pick pids to signal.
  const records = meta.children_processes
  if (
    records !== undefined &&
    (!Array.isArray(records) || !records.every((r) => r && typeof r === 'object' && Number.isInteger(r.pid)))
  )
    throw corruptStateError(file, 'has malformed children_processes (expected a list of {pid, pgid, identity})')
}
