/**
 * A parent Run's children journal (`children.jsonl` in its state dir): one
 * line per child launched from inside it, in launch order. Counting running
 * children, starting queued ones FIFO, rolling up usage and cascading a stop
 * all walk these journals instead of scanning the whole state root.
 */
import {readdirSync} from 'node:fs'
import {join} from 'node:path'
import {withLockSync} from '../../base/platform/file-lock.js'
import {isPlainName, runDir, sameStateDir} from '../../base/platform/home.js'
import {readRunState, runFile, type RunState} from './store.js'
import {appendJsonLine, readJsonLines} from '../../base/platform/state-files.js'
import {refuseLinkedDir} from '../../base/platform/private-files.js'
import type {RunMeta} from '../../base/records/run.js'
import {isSameProcess} from '../../base/platform/process-identity.js'
import {environOf, envValue, processEnvValue} from '../../base/platform/process-environ.js'
import {runsNode} from '../../base/platform/kernel-process.js'

export interface ChildRecord {
  run: string
  run_instance_id: string
  state_dir: string
  created_at: string
  queued: boolean
}

/** Lock serialising admission (count, queue, start) of one parent's children. */
export function childrenLock(parentDir: string): string {
  return join(parentDir, '.children.lock')
}

/** Append a child to its parent's journal. Callers hold childrenLock(parentDir). */
export function recordChild(parentDir: string, child: ChildRecord): void {
  // O_NOFOLLOW guards children.jsonl itself; a link in the parent's state dir place is refused here.
  refuseLinkedDir(parentDir)
  appendJsonLine(runFile(parentDir, 'children'), child)
}

/**
 * The variable a child's supervisor starts with: the instance of the parent
 * its launch record named (executors/supervisor-env.ts). The supervisor's
 * environment is fixed when it starts, before the child's command runs, and
 * the command cannot rewrite it; a neighbour cannot give it to a supervisor
 * it did not start.
 */
export const LAUNCH_PARENT_VAR = 'ACTORS_LAUNCH_PARENT'

export interface ReadChildrenOptions {
  /**
   * For ending the parent's tree: a journaled child (same instance) whose
   * run.json no longer names this parent is still this parent's when its
   * live supervisor was started for it (launchedUnder). A child that removes
   * or changes its `parent` must not hide from a kill of its tree.
   */
  treeEnd?: boolean
  /** For a tree's end: the Runs found launched under each parent instance by their processes (launchedByEnvironment). */
  launched?: Map<string, Map<string, string>>
}

/**
 * The parent's children that still belong to it, in launch order (FIFO; a
 * child launched again counts from its latest record). A child id relaunched
 * elsewhere since (another instance) is not this parent's any more and is
 * skipped; damaged lines are skipped too. A child whose run.json names
 * another parent (or none) is skipped, except for a tree's end (options).
 */
export function readChildren(
  home: string,
  parentDir: string,
  parent: Pick<RunMeta, 'run_instance_id'>,
  options: ReadChildrenOptions = {},
): RunState[] {
  const {records} = readJsonLines<ChildRecord>(runFile(parentDir, 'children'))
  // A child resumed as a new generation is recorded again: its latest record (and place in the queue) counts.
  const latest = new Map<string, ChildRecord>()
  for (const record of records) {
    if (typeof record.run !== 'string') continue
    latest.delete(record.run)
    latest.set(record.run, record)
  }
  const children: RunState[] = []
  for (const record of latest.values()) {
    let state: RunState | undefined
    try {
      // A link in the child's state dir place is skipped like a damaged child, never read through.
      state = readRunState(runDir(home, record.run), {withResult: false, refuseLink: true})
    } catch {
      continue
    }
    if (!state || state.meta.run_instance_id !== record.run_instance_id) continue
    // The journal line is a claim anyone of this user can append: it counts only with the child's own proof,
    // its record naming this parent back or, for a tree's end, its supervisor started for this parent.
    const namesParent = state.meta.parent?.run_instance_id === parent.run_instance_id
    if (!namesParent && !(options.treeEnd && launchedUnder(state.meta, parent.run_instance_id))) continue
    children.push(state)
  }
  // A child that emptied this journal (any Run may write it) is still found, for a tree's end, by the environment
  // its processes were started with.
  for (const [id, instance] of options.launched?.get(parent.run_instance_id) ?? []) {
    if (latest.has(id)) continue
    try {
      const state = readRunState(runDir(home, id), {withResult: false, refuseLink: true})
      if (state?.meta.run_instance_id === instance) children.push(state)
    } catch {}
  }
  return children
}

/**
 * Every live Run whose command processes carry LAUNCH_PARENT_VAR, by the
 * parent instance named there: run id to instance, from each process's own
 * ACTORS_RUN, ACTORS_RUN_INSTANCE and ACTORS_STATE_DIR (a Run of this state
 * root). Fixed when each process started: a child that emptied its parent's
 * journal and removed its own `parent` is still found by its tree's end
 * (tracked containment; a cgroup nests it anyway). Only a process that
 * cleared its environment leaves this, as docs/containment.md says; one that
 * claims a parent it does not have only offers its own Run to that tree's end.
 */
export function launchedByEnvironment(home: string): Map<string, Map<string, string>> {
  const found = new Map<string, Map<string, string>>()
  let entries: string[]
  try {
    entries = readdirSync('/proc')
  } catch {
    return found
  }
  for (const entry of entries) {
    if (entry.charCodeAt(0) < 48 || entry.charCodeAt(0) > 57) continue
    const environ = environOf(Number(entry))
    const parent = environ && envValue(environ, LAUNCH_PARENT_VAR)
    if (!environ || !parent) continue
    const id = envValue(environ, 'ACTORS_RUN')
    const instance = envValue(environ, 'ACTORS_RUN_INSTANCE')
    const dir = envValue(environ, 'ACTORS_STATE_DIR')
    if (!id || !instance || !dir || !isPlainName(id) || !sameStateDir(dir, runDir(home, id))) continue
    const children = found.get(parent) ?? new Map<string, string>()
    children.set(id, instance)
    found.set(parent, children)
  }
  return found
}

/**
 * Whether the Run's live supervisor (its recorded pid, identity checked) was
 * started for the parent instance `parentInstance` (LAUNCH_PARENT_VAR). A
 * forged journal line naming an unrelated Run does not pass: that Run's
 * supervisor was started for its own parent, or none.
 */
function launchedUnder(meta: RunMeta, parentInstance: string): boolean {
  if (typeof meta.pid !== 'number' || meta.process_identity?.pid !== meta.pid) return false
  if (!isSameProcess(meta.process_identity)) return false
  return processEnvValue(meta.pid, LAUNCH_PARENT_VAR) === parentInstance
}

export interface Descendant extends RunState {
  /** Distance below the Run the walk started from (children are 1). */
  level: number
}

/**
 * Every descendant of the Run in `dir`, breadth first (so deeper Runs come
 * later). `settled`: each journal is read under its children lock, so a
 * child being launched right now (created, started, not yet journaled) is
 * waited for and found: a tree's stop must not miss it.
 */
export function collectDescendants(
  home: string,
  dir: string,
  meta: Pick<RunMeta, 'run_instance_id'>,
  options: {settled?: boolean} & ReadChildrenOptions = {},
): Descendant[] {
  const out: Descendant[] = []
  let frontier: Array<{dir: string; meta: Pick<RunMeta, 'run_instance_id'>; level: number}> = [{dir, meta, level: 0}]
  const visited = new Set<string>([dir])
  // One look at the machine's processes for the whole walk (a tree's end only).
  const launched = options.treeEnd ? launchedByEnvironment(home) : undefined
  while (frontier.length > 0) {
    const next: typeof frontier = []
    for (const node of frontier) {
      const read = () => readChildren(home, node.dir, node.meta, {treeEnd: options.treeEnd, launched})
      // Taken by nobody when it names a process that runs no Node (a Run wrote pid 1 there): as the supervisor's `.lock`.
      const settled = () => withLockSync(childrenLock(node.dir), read, {takenOnlyBy: runsNode})
      for (const child of options.settled ? settled() : read()) {
        if (visited.has(child.dir)) continue
        visited.add(child.dir)
        const descendant = {...child, level: node.level + 1}
        out.push(descendant)
        next.push({dir: child.dir, meta: child.meta, level: descendant.level})
      }
    }
    frontier = next
  }
  return out
}
