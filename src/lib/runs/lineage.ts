/**
 * Who is launching: the owner and, inside a Run, the parent Run, read from the
 * variables the supervisor gives every command (SPEC: Trees, owners and limits).
 */
import {usageError} from '../platform/errors.js'
import {isPlainName, runDir} from '../platform/home.js'
import {readRunMetaRaw} from './store.js'
import type {ParentRef} from './types.js'

export interface Lineage {
  owner: string
  parent?: ParentRef
  root?: string
  depth: number
}

/** Refuse owner names that could escape the delivery directory (`$ACTORS_HOME/delivery/<owner>.json`). */
export function validateOwner(owner: string): string {
  if (!isPlainName(owner)) {
    throw usageError(`ACTORS_OWNER ${JSON.stringify(owner.slice(0, 80))} is not a valid owner name`, 'use letters, digits, "_", "." and "-" only, e.g. ACTORS_OWNER=review-bot')
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
    const owner = readRunMetaRaw(runDir(home, lineage.parent.run))?.owner
    if (typeof owner === 'string' && isPlainName(owner)) return owner
  } catch {}
  return lineage.owner
}
