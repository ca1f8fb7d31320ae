/**
 * A tree being stopped or killed takes no new Runs (issue: Runs launched
 * while a stop walked the tree survived it). `control RUN stop|kill` marks
 * the Run it was asked about as ending (run.json `ending`, under the Run's
 * lock) before it walks the tree; a launch checks its parent and every
 * ancestor under the parent's children lock, which the walk takes to read
 * that parent's children journal. So a launch either comes before the walk
 * reads the journal (and the walk finds the child), or after the mark (and
 * is refused here).
 */
import {notActiveError, type ActorsError} from '../../base/platform/errors.js'
import {withLockSync} from '../../base/platform/file-lock.js'
import {runDir} from '../../base/platform/home.js'
import {isTerminal, type RunMeta} from '../../base/records/run.js'
import {ancestorMetas} from './ancestors.js'
import {askedFrom, controlEnding} from './end-request.js'
import {readRunMetaRaw, readRunResult, runFile, writeRunMetaLocked} from './store.js'

/**
 * Mark the live Run in `dir` as ending (`stop`: cancelled, `kill`: killed),
 * ahead of its tree's walk; its own end (signals/end-run.ts) marks it again
 * as it signals. A kill overtakes a stop's mark; nothing else is replaced.
 * Best effort: a run.json that cannot be read or written is left to the end
 * itself, which reports it.
 */
export function markEnding(home: string, dir: string, mode: 'stop' | 'kill'): void {
  const status = mode === 'kill' ? 'killed' : 'cancelled'
  try {
    const from = askedFrom(home, readRunMetaRaw(dir)?.run ?? '')
    withLockSync(runFile(dir, 'lock'), () => {
      const meta = readRunMetaRaw(dir)
      if (!meta || isTerminal(meta.status) || readRunResult(dir, meta)) return
      if (meta.ending && (meta.ending.status === 'killed' || mode === 'stop')) return
      writeRunMetaLocked(dir, {
        ...meta,
        ending: controlEnding(status, from),
      })
    })
  } catch {}
}

/** Why a Run ends, as a launch under it is told: "being stopped", "killed", … */
function endingState(meta: RunMeta, dir: string, isParent: boolean): string | undefined {
  let result: ReturnType<typeof readRunResult>
  try {
    result = readRunResult(dir, meta)
  } catch {} // a damaged result.json: run.json still says what the Run is
  const status = result?.status ?? meta.status
  if (status === 'cancelled') return 'stopped'
  if (status === 'killed') return 'killed'
  if (meta.ending) return meta.ending.status === 'killed' ? 'being killed' : 'being stopped'
  // The parent alone: a Run launched by what is left of an ended parent would have no tree to end it.
  if (isParent && isTerminal(status)) return status
  return undefined
}

/**
 * The refusal of a launch under the parent `parent` (its state dir
 * `parentDir`) when it or an ancestor is being stopped or killed, was
 * stopped or killed, or (the parent alone, unless `endedParent` is false)
 * has ended; undefined otherwise. Exit 3: the tree it would join is no
 * longer active. (Children queued before their parent's normal end still
 * start after it: `endedParent: false`.)
 */
export function endingTreeRefusal(
  home: string,
  parentDir: string,
  parent: RunMeta,
  options: {endedParent?: boolean} = {},
): ActorsError | undefined {
  const line = [
    {meta: parent, dir: parentDir},
    ...ancestorMetas(home, parent).map((m) => ({meta: m, dir: runDir(home, m.run)})),
  ]
  for (const [index, {meta, dir}] of line.entries()) {
    const state = endingState(meta, dir, index === 0 && options.endedParent !== false)
    if (!state) continue
    const who = index === 0 ? `its parent Run ${meta.run}` : `its ancestor Run ${meta.run} (above parent ${parent.run})`
    return notActiveError(
      `launch refused: ${who} is ${state}; no new Run starts in a tree that is ending`,
      `launch it outside that tree (actors run at top level), or start ${meta.run} again and launch from there`,
      {ancestor: meta.run, ancestor_state: state},
    )
  }
  return undefined
}
