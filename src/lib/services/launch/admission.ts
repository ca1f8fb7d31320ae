/**
 * Launch-time tree policy, checked by run-launcher.ts for every Run before
 * anything is created: the depth cap, the parent's identity (a child of a
 * vanished or relaunched parent is refused rather than attached to the wrong
 * tree) and the root's token budget. A check, not a wrapper: it says where
 * the Run joins its tree, and the launcher creates it there.
 */
import {notActiveError, usageError} from '../../base/platform/errors.js'
import {isPlainName, runDir, sameStateDir} from '../../base/platform/home.js'
import type {LaunchSpec} from './launch.js'
import {readRunMetaRaw} from '../../kernel/runs/store.js'
import {refuseLinkedDir} from '../../base/platform/private-files.js'
import {checkBudget, checkDepth} from '../../kernel/runs/tree-limits.js'
import {effectiveMaxDepth, effectiveMaxParallel} from '../../kernel/runs/tightened-limits.js'

/** Where an admitted launch joins its tree: the spec placed there, and its parent's state dir (none for a root). */
export interface Admission {
  spec: LaunchSpec
  parentDir?: string
}

/** Check the Run `spec` describes against the limits of the tree it joins (refusals throw, exit 2, 3 or 5). */
export function admitToTree(spec: LaunchSpec, env: NodeJS.ProcessEnv = process.env): Admission {
  if (!spec.parent) {
    const maxDepth = effectiveMaxDepth(spec.home, undefined, env)
    checkDepth(spec.depth, env, maxDepth)
    return {spec: {...spec, maxDepth}}
  }
  if (spec.budgetTokens !== undefined) {
    throw usageError(
      '--budget-tokens applies to a root Run only; this Run is inside ' + spec.parent.run,
      'set the budget on the root Run of the tree, or launch this Run at top level',
    )
  }
  const parentDir = runDir(spec.home, spec.parent.run)
  // Another spelling of the same state root (a linked ACTORS_HOME) reaches the same parent.
  if (!sameStateDir(spec.parent.state_dir, parentDir)) {
    throw usageError(
      `lineage is incomplete: the parent's state dir ${spec.parent.state_dir} (ACTORS_STATE_DIR) is not ${parentDir} in this state root`,
      'launch with the same ACTORS_HOME / --home as the parent Run',
    )
  }
  // The parent is reached by its id: never through a link in its state dir's place (exit 1).
  refuseLinkedDir(parentDir)
  const parent = readRunMetaRaw(parentDir)
  if (!parent) {
    throw usageError(
      `lineage is incomplete: parent Run ${spec.parent.run} not found at ${parentDir}`,
      'launch from inside a live Run, or unset ACTORS_RUN, ACTORS_RUN_INSTANCE and ACTORS_STATE_DIR',
    )
  }
  if (parent.run_instance_id !== spec.parent.run_instance_id) {
    throw notActiveError(
      `parent Run ${parent.run} is now instance ${parent.run_instance_id}, not ${spec.parent.run_instance_id}`,
      'this process belongs to an earlier launch of the parent; its launches are refused',
    )
  }
  // The verified parent, not ACTORS_ROOT / ACTORS_DEPTH / ACTORS_OWNER (which any process can change), places
  // the child: a stale or edited variable must not dodge the depth cap or the root's budget, nor move the
  // child (and its subtree) out of its root's `wait`.
  const depth = (Number.isInteger(parent.depth) && parent.depth >= 0 ? parent.depth : 0) + 1
  const root = typeof parent.root === 'string' && parent.root !== '' ? parent.root : parent.run
  const owner = typeof parent.owner === 'string' && isPlainName(parent.owner) ? parent.owner : spec.owner
  // Limits only tighten: the ancestors' run.json, not this environment, bound the child's.
  const maxDepth = effectiveMaxDepth(spec.home, parent, env)
  checkDepth(depth, env, maxDepth)
  checkBudget(spec.home, root)
  const maxParallel = effectiveMaxParallel(spec.home, parent, spec.maxParallel)
  return {spec: {...spec, root, depth, owner, maxDepth, maxParallel}, parentDir}
}
