/**
 * Who is launching: the owner and, inside a Run, the parent Run, read from the
 * variables the supervisor gives every command (SPEC: Trees, owners and limits).
 */
import {dirname} from 'node:path'
import {notActiveError, usageError} from '../platform/errors.js'
import {isPlainName} from '../platform/home.js'
import {readRunMetaById, requireRun, type RunState} from './store.js'
import type {ParentRef} from '../records/run.js'

/** How a command that only works inside a Run words its refusals. */
export interface OwnRunWording {
  /** The command, as in "emit must be called from inside a Run". */
  command: string
  /** The fix when called outside a Run. */
  outsideFix: string
  /** The fix for a process of an earlier launch of the Run. */
  staleFix: string
}

/**
 * The Run this process runs in, from the variables the supervisor sets
 * (ACTORS_STATE_DIR, ACTORS_RUN, ACTORS_RUN_INSTANCE): exit 2 outside a Run,
 * 3 for a process of an earlier launch (the Run id now names another instance).
 */
export function resolveOwnRun(
  wording: OwnRunWording,
  env: NodeJS.ProcessEnv = process.env,
): {home: string; state: RunState; instance: string} {
  const stateDir = env.ACTORS_STATE_DIR
  const instance = env.ACTORS_RUN_INSTANCE
  if (!stateDir || !instance || !env.ACTORS_RUN) {
    throw usageError(
      `${wording.command} must be called from inside a Run (ACTORS_STATE_DIR, ACTORS_RUN and ACTORS_RUN_INSTANCE are not set)`,
      wording.outsideFix,
    )
  }
  const home = env.ACTORS_HOME ?? dirname(dirname(stateDir))
  const state = requireRun(home, env.ACTORS_RUN)
  if (state.meta.run_instance_id !== instance) {
    throw notActiveError(
      `Run ${env.ACTORS_RUN} is now instance ${state.meta.run_instance_id}, not ${instance}`,
      wording.staleFix,
    )
  }
  return {home, state, instance}
}

export interface Lineage {
  owner: string
  parent?: ParentRef
  root?: string
  depth: number
}

/** Refuse owner names that could escape the delivery directory (`$ACTORS_HOME/delivery/<owner>.json`). */
export function validateOwner(owner: string): string {
  if (!isPlainName(owner)) {
    throw usageError(
      `ACTORS_OWNER ${JSON.stringify(owner.slice(0, 80))} is not a valid owner name`,
      'use letters, digits, "_", "." and "-" only, e.g. ACTORS_OWNER=review-bot',
    )
  }
  return owner
}

/** The lineage of a new Run launched from an environment `env`. */
export function lineageFromEnv(env: NodeJS.ProcessEnv = process.env): Lineage {
  // Validated here so a Run whose owner no `wait` could ever collect is refused before it starts.
  const owner = validateOwner(env.ACTORS_OWNER || 'default')
  const run = env.ACTORS_RUN
  const instance = env.ACTORS_RUN_INSTANCE
  const stateDir = env.ACTORS_STATE_DIR
  const present = [run, instance, stateDir].filter((v) => v !== undefined && v !== '').length
  if (present === 0) return {owner, depth: 0}
  if (present < 3) {
    throw usageError(
      'lineage is incomplete: ACTORS_RUN, ACTORS_RUN_INSTANCE and ACTORS_STATE_DIR must all be set inside a Run',
      'unset all three to launch a top-level Run, or launch from inside a Run started by actors',
    )
  }
  const parentDepth = Number(env.ACTORS_DEPTH ?? '0')
  return {
    owner,
    parent: {run: run!, run_instance_id: instance!, state_dir: stateDir!},
    root: env.ACTORS_ROOT || run,
    depth: (Number.isInteger(parentDepth) && parentDepth >= 0 ? parentDepth : 0) + 1,
  }
}

/**
 * The owner a command inside a tree acts for: the Run it runs in records its
 * tree's owner, and that wins over ACTORS_OWNER (which any process can
 * change), so no part of a tree can leave its root's `wait`. Outside a Run:
 * ACTORS_OWNER, else "default".
 */
export function treeOwner(home: string, lineage: Lineage): string {
  if (!lineage.parent) return lineage.owner
  try {
    const owner = readRunMetaById(home, lineage.parent.run)?.owner
    if (typeof owner === 'string' && isPlainName(owner)) return owner
  } catch {}
  return lineage.owner
}
