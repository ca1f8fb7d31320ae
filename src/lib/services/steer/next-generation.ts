/**
 * Starting the next generation of a finished Run from what its run.json
 * recorded (SPEC: `send` resumes, `rerun` starts again): same Recipe, values,
 * cwd and lineage, through the same tree policy as any launch (depth limit,
 * the root's budget, the parent's max-parallel queue).
 */
import {refuseClosed} from '../../kernel/runs/closed.js'
import {dirname} from 'node:path'
import {randomUuid} from '../../base/platform/builtins.js'
import {notActiveError, usageError} from '../../base/platform/errors.js'
import {runDir} from '../../base/platform/home.js'
import type {LaunchResult, LaunchSpec} from '../launch/launch.js'
import {loadRecipeFile, recipeError} from '../../kernel/recipes/load.js'
import {resolveRecipe} from '../../kernel/recipes/resolve.js'
import {readRunMetaRaw, type RunState} from '../../kernel/runs/store.js'
import type {PolicyRule, RunMeta} from '../../base/records/run.js'
import {launchInTree} from '../launch/run-launcher.js'
import {checkBudget} from '../../kernel/runs/tree-limits.js'
import {existsSync} from 'node:fs'

export interface NextGeneration {
  /** The message that resumes the Run (send), or none (rerun). */
  message?: string
  /** `NAME=VALUE` words replacing earlier values (rerun); validated like a launch. */
  assignments?: string[]
  /** A launch policy of whoever starts it (an `actors mcp` server), added to the one its record holds. */
  policy?: PolicyRule[]
}

export interface NextGenerationResult extends LaunchResult {
  generation: number
  message_id?: string
}

/** The launch of `state`'s Run as its next generation; refusals are the launch's (2, 3, 5). */
export function startNextGeneration(home: string, state: RunState, change: NextGeneration): NextGenerationResult {
  const {meta} = state
  refuseClosed(meta) // before re-resolving anything; the launch checks again under the Run's lock
  const policed = Boolean(change.policy?.length) || (Array.isArray(meta.policy) && meta.policy.length > 0)
  const spec = specFromMeta(home, meta, change.assignments ?? [], policed)
  // The starter's policy joins the record's; a damaged record (not a list) stays, for tree-policy.ts to refuse.
  if (change.policy && (spec.policy === undefined || Array.isArray(spec.policy)))
    spec.policy = [...(spec.policy ?? []), ...change.policy]
  const messageId = change.message !== undefined ? randomUuid() : undefined
  if (change.message !== undefined) spec.message = {id: messageId!, text: change.message}
  const launched = launchInTree(spec)
  const now = readRunMetaRaw(launched.state_dir)
  return {
    ...launched,
    generation: typeof now?.generation === 'number' ? now.generation : 1,
    ...(messageId ? {message_id: messageId} : {}),
  }
}

/**
 * Rebuild a LaunchSpec from run.json. A Run can rewrite its own run.json, so
 * the command of a Recipe Run is never taken from it: the Recipe is resolved
 * again (its recorded values as the earlier ones, `assignments` over them,
 * all checked like a launch's), and the launch policy checks the Recipe
 * itself. Only an ad-hoc Run replays its recorded command: there is no other
 * record of it, and a policy that refuses ad-hoc commands refuses it.
 */
function specFromMeta(home: string, meta: RunMeta, assignments: string[], policed: boolean): LaunchSpec {
  let resolved = {values: meta.values, plan: meta.plan, env: meta.env}
  if (!meta.recipe_file && assignments.length > 0)
    throw usageError(
      `Run ${meta.run} is an ad-hoc command; it takes no NAME=VALUE`,
      `rerun it as it was (actors rerun ${meta.run}), or launch a changed command with actors run --name ${meta.run} -- ...`,
    )
  if (meta.recipe_file) {
    if (!existsSync(meta.recipe_file)) {
      // From the command line, a Run whose Recipe is gone is rerun as recorded; under a policy, never.
      if (assignments.length > 0 || policed)
        throw recipeError(
          meta.recipe_file,
          null,
          assignments.length > 0
            ? 'is gone; its Run cannot be re-resolved with new values'
            : 'is gone; under a launch policy its Run is started only from its Recipe',
          `restore the Recipe${assignments.length > 0 ? `, or rerun without values (actors rerun ${meta.run})` : ''}`,
        )
    } else {
      const recipe = loadRecipeFile(meta.recipe_file, dirname(meta.recipe_file))
      resolved = resolveRecipe(
        {...recipe, name: meta.recipe ?? recipe.name},
        assignments,
        {run_id: meta.run, state_dir: runDir(home, meta.run)},
        meta.values,
      )
    }
  }
  const spec: LaunchSpec = {
    home,
    id: meta.run,
    explicitId: true,
    recipe: meta.recipe,
    recipeFile: meta.recipe_file,
    values: resolved.values,
    plan: resolved.plan,
    cwd: meta.cwd,
    env: resolved.env,
    timeoutMs: meta.timeout_ms,
    retry: meta.retry,
    killGraceMs: meta.kill_grace_ms,
    control: meta.control,
    artifacts: meta.artifacts,
    notification: meta.notification,
    singleton: meta.singleton,
    maxParallel: meta.max_parallel,
    owner: meta.owner,
    depth: meta.depth,
    inbox: meta.inbox,
    resume: meta.resume,
    // Its own record's launch policy holds the next generation too (checked again with its tree's: launch/tree-policy.ts).
    ...(meta.policy !== undefined ? {policy: meta.policy} : {}),
  }
  if (!meta.parent) {
    // A root keeps its budget; a spent one refuses the new generation like any launch in the tree.
    if (typeof meta.budget_tokens === 'number') checkBudget(home, meta.run)
    spec.budgetTokens = meta.budget_tokens
    return spec
  }
  // The new generation joins its parent's current generation (which may have been resumed meanwhile).
  const parentDir = runDir(home, meta.parent.run)
  const parent = readRunMetaRaw(parentDir)
  if (!parent) {
    throw notActiveError(
      `Run ${meta.run}'s parent ${meta.parent.run} no longer exists`,
      `start a new top-level Run instead (actors run ... ), or adopt it elsewhere`,
    )
  }
  spec.parent = {run: parent.run, run_instance_id: parent.run_instance_id, state_dir: parentDir}
  spec.root = parent.root
  return spec
}
