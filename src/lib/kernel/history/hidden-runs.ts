/**
 * A Run cannot hide (issue: one that deleted its own state dir vanished from
 * `inspect` while its command ran on; so did one that deleted only its
 * run.json, taken for a launch still making its files). The run index keeps
 * a live marker `<run>@<instance>` for every live Run, and the unit itself
 * is found from facts the machine keeps (containment/unit-facts.ts), so a
 * marker whose state dir or run.json is gone while its unit lives is listed
 * with what is known (as a damaged Run dir: its dir, its instance, its pids)
 * and keeps its marker; `actors control RUN kill` ends it
 * (control/end-first.ts).
 */
import {existsSync, lstatSync} from 'node:fs'
import {join, sep} from 'node:path'
import {ActorsError, EXIT, isActorsError} from '../../base/platform/errors.js'
import {isPlainName, runsDir} from '../../base/platform/home.js'
import {homeKey} from '../containment/index.js'
import {findUnitByFacts, otherPids} from '../containment/unit-facts.js'
import {processEnvValue} from '../../base/platform/process-environ.js'
import {listIndex} from './live-index.js'
import {parseMarker, validMarker} from './index-markers.js'

/** The damage note for a Run whose state dir `dir` (or its run.json) is gone while its unit lives; undefined when nothing of it lives. */
export function hiddenRunNote(home: string, id: string, instance: string, dir: string): string | undefined {
  // A unit is found from the processes that carry its dir: none, nothing to look for (one pass for every marker).
  if (!carriedStateDirs().has(dir)) return undefined
  const {pids} = findUnitByFacts(dir, homeKey(home))
  if (pids.length === 0) return undefined
  const shown = pids.slice(0, 8).join(', ') + (pids.length > 8 ? ', …' : '')
  const gone = existsSync(dir) ? 'run.json is gone' : 'state dir is gone'
  return `${gone} but Run ${id} (instance ${instance}) still runs: pids ${shown}; end it with \`actors control ${id} kill\``
}

/** How long one pass over /proc answers for every marker a command reads (a listing, a watch's refresh). */
const CARRIED_REUSE_MS = 500

let carried: {at: number; dirs: Set<string>} | undefined

/**
 * The state dirs some live process's environment names (`ACTORS_STATE_DIR`,
 * as findUnitByFacts compares it), read in one pass over /proc and reused
 * for a moment: each marker whose dir is gone or empty used to cost a pass
 * of its own, so a Run that wrote 20,000 of them made every listing take 40 s
 * (red-team 13 N3-M3).
 */
function carriedStateDirs(): Set<string> {
  if (carried && Date.now() - carried.at < CARRIED_REUSE_MS) return carried.dirs
  const dirs = new Set<string>()
  for (const pid of otherPids()) {
    const dir = processEnvValue(pid, 'ACTORS_STATE_DIR')
    if (dir) dirs.add(dir)
  }
  carried = {at: Date.now(), dirs}
  return dirs
}

/** Whether anything is at run.json in `dir` (a damaged one is listed as damaged by its readers). */
const hasRunJson = (dir: string) => lstatSync(join(dir, 'run.json'), {throwIfNoEntry: false}) !== undefined

/** Every live marker whose state dir or run.json is gone while its unit lives, as damaged Run dirs for a listing. */
export function hiddenRuns(home: string): Array<{state_dir: string; error: string}> {
  const found: Array<{state_dir: string; error: string}> = []
  const base = runsDir(home) + sep
  for (const name of listIndex(home)) {
    const marker = parseMarker(name)
    if (!marker || marker.queued || !validMarker(marker) || hasRunJson(base + marker.id)) continue
    const note = hiddenRunNote(home, marker.id, marker.instance, base + marker.id)
    if (note) found.push({state_dir: base + marker.id, error: note})
  }
  return found
}

/** `inspect RUN` of a Run whose state dir is gone while its unit lives: what is known of it, as damage (exit 1); else `error` as it was. */
export function hiddenRunError(home: string, ref: string, error: unknown): unknown {
  if (!isActorsError(error) || error.exitCode !== EXIT.notFound || !isPlainName(ref)) return error
  const hidden = hiddenRuns(home).find((entry) => entry.state_dir === runsDir(home) + sep + ref)
  return hidden ? new ActorsError(`${hidden.state_dir}: ${hidden.error}`, EXIT.failed) : error
}
