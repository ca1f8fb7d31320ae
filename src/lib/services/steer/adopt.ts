/**
 * `actors adopt RUN ... [--parent P]` (SPEC: Generations and steering): make
 * top-level Runs of the same owner children of a Run. Lineage, root and depth
 * are rewritten for each whole moved subtree, inside the depth limit and the
 * parent's caps (max-parallel, the tree's budget). Every check passes for
 * every Run before anything is changed.
 */
import {traceChildStarted} from '../../kernel/runs/child-events.js'
import {refuseClosed} from '../../kernel/runs/closed.js'
import {notActiveError, refusedError, usageError} from '../../base/platform/errors.js'
import {resolveRunRef} from '../../base/platform/home.js'
import {withLockSync} from '../../base/platform/file-lock.js'
import {notifyStateChange} from '../../base/bell/notify.js'
import {requireRun, updateRunMeta, type RunState} from '../../kernel/runs/store.js'
import {isTerminal, type RunMeta} from '../../base/records/run.js'
import {childrenLock, collectDescendants, readChildren, recordChild} from '../../kernel/runs/children.js'
import {checkBudget} from '../../kernel/runs/tree-limits.js'
import {effectiveMaxDepth} from '../../kernel/runs/tightened-limits.js'
import {traceAdoption} from '../launch/adopt-children.js'
import {unitOfCaller} from '../../kernel/runs/lineage.js'

export interface AdoptReply {
  parent: string
  parent_run_instance_id: string
  adopted: Array<{run: string; run_instance_id: string; depth: number; descendants: number}>
}

/**
 * The adopting Run: `--parent P`, else the Run this command runs in: the Run
 * of its unit when it is inside one (runs/lineage.ts unitOfCaller), else the
 * one its environment names (its instance must be current).
 */
function resolveParent(home: string, parentRef: string | undefined, env: NodeJS.ProcessEnv): RunState {
  if (parentRef !== undefined) return requireState(home, parentRef)
  const unit = unitOfCaller(home, env, 'adopt')
  if (unit) return requireState(home, unit.run)
  if (!env.ACTORS_RUN || !env.ACTORS_RUN_INSTANCE) {
    throw usageError(
      'adopt needs a parent: pass --parent RUN, or call it from inside a Run',
      'actors adopt RUN ... --parent COORDINATOR',
    )
  }
  const state = requireState(home, env.ACTORS_RUN)
  if (state.meta.run_instance_id !== env.ACTORS_RUN_INSTANCE) {
    throw notActiveError(
      `Run ${env.ACTORS_RUN} is now instance ${state.meta.run_instance_id}, not ${env.ACTORS_RUN_INSTANCE}`,
      'this process belongs to an earlier generation of the Run; its adoptions are refused',
    )
  }
  return state
}

function requireState(home: string, ref: string): RunState {
  return requireRun(home, resolveRunRef(home, ref))
}

/** Adopt the Runs `refs` under the parent; see the module comment. */
export function adoptRuns(
  home: string,
  refs: string[],
  parentRef: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
): AdoptReply {
  if (refs.length === 0) throw usageError('no Run to adopt', 'actors adopt RUN ... [--parent P]')
  const parent = resolveParent(home, parentRef, env)
  refuseClosed(parent.meta)
  const limit = effectiveMaxDepth(home, parent.meta, env)
  const plans = [...new Set(refs.map((ref) => resolveRunRef(home, ref)))].map((id) =>
    planAdoption(home, parent.meta, requireState(home, id), limit),
  )
  checkBudget(home, parent.meta.root ?? parent.meta.run)
  checkParallelCap(
    home,
    parent,
    plans.filter((p) => p.child.meta.status === 'running' || p.child.meta.status === 'paused').length,
  )

  const adopted: AdoptReply['adopted'] = []
  withLockSync(childrenLock(parent.dir), () => {
    for (const plan of plans) {
      const {child, descendants} = plan
      const depth = parent.meta.depth + 1
      const root = parent.meta.root ?? parent.meta.run
      const moved = updateRunMeta(child.dir, (meta) => {
        if (meta.parent || meta.run_instance_id !== child.meta.run_instance_id) return undefined
        return {
          ...meta,
          parent: {run: parent.meta.run, run_instance_id: parent.meta.run_instance_id, state_dir: parent.dir},
          root,
          depth,
          adopted_at: new Date().toISOString(),
        }
      })
      if (!moved?.parent || moved.parent.run !== parent.meta.run) {
        throw notActiveError(
          `Run ${child.meta.run} changed while being adopted (it has a parent, or started another generation)`,
          'inspect it, then retry',
        )
      }
      for (const d of descendants)
        updateRunMeta(d.dir, (meta) =>
          meta.run_instance_id === d.meta.run_instance_id ? {...meta, root, depth: depth + d.level} : undefined,
        )
      recordChild(parent.dir, {
        run: moved.run,
        run_instance_id: moved.run_instance_id,
        state_dir: child.dir,
        created_at: new Date().toISOString(),
        queued: moved.status === 'queued',
      })
      traceAdoption(child.dir, moved, `adopted by ${parent.meta.run}`, {
        parent: parent.meta.run,
        parent_run_instance_id: parent.meta.run_instance_id,
      })
      traceChildStarted(parent.dir, moved, {adopted: true})
      traceAdoption(parent.dir, parent.meta, `adopted ${moved.run}`, {
        child: moved.run,
        child_run_instance_id: moved.run_instance_id,
        descendants: descendants.length,
      })
      adopted.push({run: moved.run, run_instance_id: moved.run_instance_id, depth, descendants: descendants.length})
    }
  })
  notifyStateChange(home)
  return {parent: parent.meta.run, parent_run_instance_id: parent.meta.run_instance_id, adopted}
}

interface AdoptionPlan {
  child: RunState
  descendants: ReturnType<typeof collectDescendants>
}

/** Refuse what cannot be adopted: a Run with a parent (3), another owner's (3), the parent's own tree (2), too deep (5). */
function planAdoption(home: string, parent: RunMeta, child: RunState, limit: number): AdoptionPlan {
  const id = child.meta.run
  refuseClosed(child.meta) // a closed Run id joins no tree (exit 5)
  if (child.meta.parent) {
    throw notActiveError(
      `Run ${id} already has a parent (${child.meta.parent.run}); only top-level Runs can be adopted`,
      `adopt its root instead (actors inspect ${id} shows it)`,
    )
  }
  if (child.meta.owner !== parent.owner) {
    throw notActiveError(
      `Run ${id} belongs to owner ${child.meta.owner}, not ${parent.owner}`,
      'only Runs of the same owner can be adopted',
    )
  }
  if (id === parent.run || (parent.root ?? parent.run) === id) {
    throw usageError(
      `Run ${parent.run} is ${id === parent.run ? id : `inside the tree of ${id}`}; a Run cannot adopt itself or its own root`,
      'pick a parent outside the tree being moved',
    )
  }
  const descendants = collectDescendants(home, child.dir, child.meta)
  const deepest = parent.depth + 1 + Math.max(0, ...descendants.map((d) => d.level))
  if (deepest > limit) {
    throw refusedError(
      `adopting ${id} under ${parent.run} would put Runs at depth ${deepest}, over the limit of ${limit} (ACTORS_MAX_DEPTH)`,
      'adopt it under a shallower Run, or raise ACTORS_MAX_DEPTH',
      {depth: deepest, max_depth: limit},
    )
  }
  return {child, descendants}
}

/** Refuse (exit 5) when the running Runs being adopted would overfill the parent's --max-parallel. */
function checkParallelCap(home: string, parent: RunState, adding: number): void {
  const cap = parent.meta.max_parallel
  if (typeof cap !== 'number' || adding === 0 || isTerminal(parent.meta.status)) return
  const running = readChildren(home, parent.dir, parent.meta).filter(
    (c) => c.meta.status === 'running' || c.meta.status === 'paused',
  ).length
  if (running + adding > cap) {
    throw refusedError(
      `Run ${parent.meta.run} runs ${running} of at most ${cap} children (--max-parallel); adopting ${adding} running Run(s) would exceed it`,
      'adopt once some of its children have ended, or adopt fewer at once',
      {running, max_parallel: cap},
    )
  }
}
