/**
 * The Run forest for `inspect --tree`: every Run under its parent (matched by
 * run id and instance; a parent with earlier generations also keeps their
 * finished children, which belong to its Run id), with status, duration and usage per node and the
 * usage total per tree ("unknown" when any Run in it did not report).
 */
import {notFoundError} from '../../base/platform/errors.js'
import {resolveRunRef, runsDir} from '../../base/platform/home.js'
import {listRuns} from '../runs/store.js'
import {summarizeRun} from '../runs/summary.js'
import {combineUsage, runTokens, type TreeUsage} from '../runs/usage-rollup.js'
import {compareText} from '../../base/platform/compare.js'

export interface TreeNode {
  run: string
  run_instance_id: string
  recipe: string | null
  status: string
  depth: number
  /** Which launch of the Run id (views show `build#3` from 2 on). */
  generation?: number
  created_at: string
  duration_ms: number | null
  /** Tokens this Run reported, or null when it reported none. */
  usage: number | null
  state_dir: string
  /** A queued Run waiting for resource locks: their names ([locks]). */
  waiting_for?: string[]
  children: TreeNode[]
  /** On the top node of each returned tree: usage of the whole (sub)tree. */
  tree_usage?: TreeUsage
}

export interface Forest {
  forest: TreeNode[]
  damaged: Array<{state_dir: string; error: string}>
}

/** Build the forest of all Runs, or the subtree of `ref` (a Run id or state dir). */
export function buildForest(home: string, ref?: string): Forest {
  const now = Date.now()
  const nodes = new Map<string, TreeNode>()
  const parents = new Map<string, {run: string; run_instance_id: string} | undefined>()
  const damaged: Forest['damaged'] = []
  for (const state of listRuns(home, {withResult: false})) {
    if (state.error) {
      damaged.push({state_dir: state.dir, error: state.error})
      continue
    }
    const summary = summarizeRun(state, now)
    nodes.set(summary.run, {
      run: summary.run,
      run_instance_id: summary.run_instance_id,
      recipe: summary.recipe,
      status: summary.status,
      depth: summary.depth,
      generation: summary.generation,
      created_at: summary.created_at,
      duration_ms: summary.duration_ms,
      usage: runTokens(state.dir),
      state_dir: state.dir,
      ...(summary.waiting_for ? {waiting_for: summary.waiting_for} : {}),
      children: [],
    })
    parents.set(summary.run, state.meta.parent)
  }
  const roots: TreeNode[] = []
  for (const node of nodes.values()) {
    const parentRef = parents.get(node.run)
    const parent = parentRef ? nodes.get(parentRef.run) : undefined
    // A finished child of an earlier generation of its parent stays under the parent id (children belong to the Run id).
    const sameRun = parent && (parent.run_instance_id === parentRef!.run_instance_id || (parent.generation ?? 1) > 1)
    if (parent && sameRun && parent !== node) parent.children.push(node)
    else roots.push(node)
  }
  const byCreation = (a: TreeNode, b: TreeNode) => compareText(a.created_at, b.created_at) || compareText(a.run, b.run)
  for (const node of nodes.values()) node.children.sort(byCreation)
  roots.push(...boundTrees(roots, [...nodes.values()].sort(byCreation), parents, nodes))
  roots.sort(byCreation)
  let forest = roots
  if (ref !== undefined) {
    const id = resolveRunRef(home, ref)
    const node = nodes.get(id)
    if (!node) throw notFoundError(`Run ${id} not found in ${runsDir(home)}`)
    forest = [node]
  }
  for (const top of forest) top.tree_usage = combineUsage(flatten(top).map((n) => n.usage))
  return {forest, damaged}
}

/** A tree's nodes in preorder. */
export function flatten(node: TreeNode): TreeNode[] {
  const out: TreeNode[] = [node]
  for (const child of node.children) out.push(...flatten(child))
  return out
}

/** Levels a shown tree has at most; below, a subtree goes on as a tree of its own. Real trees stop at their max_depth. */
const MAX_SHOWN_LEVELS = 100

/**
 * The nodes that must become trees of their own so that every tree is
 * finite and shallow: those below MAX_SHOWN_LEVELS, and those no root
 * reaches (parents naming each other in a circle). Parents come from
 * records a Run can rewrite: a planted chain 3,000 deep overflowed the stack
 * of every walk of the forest, and a circle hid both Runs from it. Each such
 * node is detached from its parent's children (`ordered`: by creation).
 */
function boundTrees(
  roots: readonly TreeNode[],
  ordered: readonly TreeNode[],
  parents: ReadonlyMap<string, {run: string} | undefined>,
  nodes: ReadonlyMap<string, TreeNode>,
): TreeNode[] {
  const reached = new Set<TreeNode>()
  const detached: TreeNode[] = []
  const detach = (node: TreeNode) => {
    const parent = nodes.get(parents.get(node.run)?.run ?? '')
    if (parent) parent.children = parent.children.filter((child) => child !== node)
    detached.push(node)
  }
  const reach = (top: TreeNode) => {
    let level = [top]
    for (let depth = 0; level.length > 0; depth++) {
      const next: TreeNode[] = []
      for (const node of level) {
        if (reached.has(node)) continue
        reached.add(node)
        if (depth + 1 < MAX_SHOWN_LEVELS) next.push(...node.children)
        else for (const child of [...node.children]) detach(child)
      }
      level = next
    }
  }
  for (const top of roots) reach(top)
  for (let index = 0; index < detached.length || reached.size < ordered.length; index++) {
    if (index >= detached.length) {
      const unreached = ordered.find((node) => !reached.has(node))
      if (!unreached) break
      detach(unreached)
    }
    reach(detached[index]!)
  }
  return detached
}
