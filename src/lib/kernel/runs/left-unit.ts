/**
 * Processes found outside a Run's unit by its marker while `control
 * stop|kill` ended it (SPEC: Containment, `leftover`). The control command
 * notes each in run.json `left_unit` before it kills them, so the supervisor,
 * which writes result.json only after its command is gone, names them in
 * `leftover` even though its own sweep finds nothing left.
 */
import {readProcStat} from '../../base/platform/process-identity.js'
import type {Leftover} from '../containment/index.js'
import type {RunMeta} from '../../base/records/run.js'
import {updateRunMeta} from './store.js'

/** Record `found` (outside the unit, about to be killed) in run.json `left_unit`. */
export function noteLeftUnit(dir: string, found: Leftover[]): void {
  try {
    updateRunMeta(dir, (meta) => ({...meta, left_unit: [...leftUnitOf(meta), ...found]}))
  } catch {
    // A damaged run.json never stops a kill: the processes are killed all the same, only not named.
  }
}

/** run.json `left_unit` as leftover entries (`ended`: gone by now), skipping anything malformed. */
export function leftUnitOf(meta: RunMeta): Leftover[] {
  const items = Array.isArray(meta.left_unit) ? (meta.left_unit as unknown[]) : []
  return items.flatMap((item) => {
    const {pid, command} = (item ?? {}) as {pid?: unknown; command?: unknown}
    if (!Number.isInteger(pid) || typeof command !== 'string') return []
    const state = readProcStat(pid as number)?.state
    return [{pid: pid as number, command, outside: 'marker' as const, ended: state === undefined || state === 'Z'}]
  })
}
