/**
 * What one entry of the run index (live-index.ts) stands for, read from its
 * state dir: live, finished and unreported, an earlier generation still
 * owed, or needing nothing any more. The one place that decides it, for the
 * readers (index-reader.ts) and the rebuild (index-rebuild.ts) alike, which
 * also hands over the run.json it just read (justRead).
 */
import {existsSync} from 'node:fs'
import {join, sep} from 'node:path'
import {withLockSync} from '../../base/platform/file-lock.js'
import {readJsonFile} from '../../base/platform/state-files.js'
import {runsDir} from '../../base/platform/home.js'
import {isReported} from '../runs/reported.js'
import {readOwedArchive} from '../runs/generation-owed.js'
import {readRunState, type RunState} from '../runs/store.js'
import {isTerminal, type RunMeta} from '../../base/records/run.js'
import {hiddenRunNote} from './hidden-runs.js'

/** What an index marker stands for. */
export type IndexedInstance =
  | {kind: 'live' | 'unreported'; state: RunState}
  /** An earlier generation of the Run, finished and not yet reported: its dir is generations/<n>/. */
  | {kind: 'owed'; state: RunState}
  /** Terminal and reported (or silent): the marker can go. */
  | {kind: 'settled'}
  /** No such instance any more (pruned, or its id relaunched): the marker can go. */
  | {kind: 'gone'}
  /** The state dir exists without run.json yet (a launch in progress). */
  | {kind: 'creating'}
  | {kind: 'damaged'; dir: string; error: string}

/**
 * run.json of finished, unreported Runs an index rebuild just read, so the
 * readers in the same command do not read them again (a finished Run changes
 * only by hand or by being reported, and reporting happens after the read
 * anyway: a cache for one command, never across commands). Taken on first use.
 * Bounded: a command reads a batch or a table of them, and keeping every Run of
 * a large rebuild alive would cost more in memory than the reads it saves.
 */
export const justRead = new Map<string, RunMeta>()
/** The most run.json justRead keeps. */
export const JUST_READ_MAX = 1024

/**
 * The one place that maps an index entry to the Run instance it stands for,
 * read (and reconciled) from its state dir. An instance is unreported while
 * it is terminal, not silent, and its state dir holds no reported.json for it.
 */
export function readIndexedInstance(home: string, id: string, instance: string): IndexedInstance {
  const dir = runsDir(home) + sep + id
  let state: RunState | undefined
  const rebuilt = justRead.get(dir)
  if (rebuilt) {
    justRead.delete(dir)
    // Found finished and unreported a moment ago, by the rebuild this command ran.
    if (rebuilt.run_instance_id === instance) return {kind: 'unreported', state: {dir, meta: rebuilt}}
    state = {dir, meta: rebuilt}
  } else {
    try {
      // A marker names an id: a link put in its state dir's place since is damage, never read through.
      state = readRunState(dir, {withResult: false, refuseLink: true})
    } catch (error) {
      return {kind: 'damaged', dir, error: (error as Error).message}
    }
  }
  if (!state) {
    // A Run that deleted its own state dir, or its run.json, is still listed while its unit lives (hidden-runs.ts);
    // a dir without run.json and with nothing of it running is a launch still making its files.
    const hidden = hiddenRunNote(home, id, instance, dir)
    if (hidden) return {kind: 'damaged', dir, error: hidden}
    return existsSync(dir) ? {kind: 'creating'} : {kind: 'gone'}
  }
  if (state.meta.run_instance_id !== instance) {
    const owed = readOwedInstance(dir, state.meta, instance)
    return owed.kind === 'gone' ? confirmGone(dir, instance) : owed
  }
  if (!isTerminal(state.meta.status)) return {kind: 'live', state}
  if (!needsReport(dir, state.meta)) return {kind: 'settled'}
  return {kind: 'unreported', state}
}

/**
 * An instance that is not the Run's current one: an earlier generation
 * run.json lists as owed keeps its marker until its archive holds its
 * reported.json (runs/generation-delivery.ts); any other is gone.
 */
export function readOwedInstance(dir: string, current: RunMeta, instance: string): IndexedInstance {
  const archive = readOwedArchive(dir, current, instance)
  if (!archive || !isTerminal(archive.meta.status) || !needsReport(archive.dir, archive.meta)) return {kind: 'gone'}
  return {kind: 'owed', state: archive}
}

/**
 * An instance the Run's run.json neither is nor owes: gone, or the next
 * generation in the middle of its launch, whose marker is made first, under
 * the Run's lock, before run.json is replaced (runs/store.ts
 * writeNewRunLocked; a generation move takes a moment). Decided again under
 * that lock, so a reader never drops the marker of a generation about to
 * start (it would then end with no place in the index, never delivered).
 */
function confirmGone(dir: string, instance: string): IndexedInstance {
  try {
    return withLockSync(
      join(dir, '.lock'),
      (): IndexedInstance => {
        const meta = readJsonFile<RunMeta>(join(dir, 'run.json'))
        // Launched meanwhile (or mid-move): the next read finds it where it belongs.
        if (!meta || meta.run_instance_id === instance || meta.generation_move) return {kind: 'creating'}
        return readOwedInstance(dir, meta, instance)
      },
      {timeoutMs: 2000},
    )
  } catch {
    // The lock stayed taken (a launch still at work): keep the marker for the next reader.
    return {kind: 'creating'}
  }
}

/** Whether a terminal Run still has to be reported to its owner. */
export function needsReport(dir: string, meta: RunMeta): boolean {
  return meta.notification !== 'silent' && !isReported(dir, meta.run_instance_id)
}
