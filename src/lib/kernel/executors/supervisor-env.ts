/**
 * The environment a new supervisor starts with, whichever executor starts it:
 * the caller's, minus the variables that describe the caller's own Run.
 */
import {binDir} from '../../base/platform/package-root.js'
import {LINEAGE_VARS} from '../runs/lineage.js'
import {LAUNCH_PARENT_VAR} from '../runs/children.js'

/**
 * The supervisor's environment for a Run under the state root `home` (from `base`, this process's by default);
 * `parentInstance`: the parent instance its launch record names, which a
 * tree's end checks when the Run's run.json no longer names it (runs/children.ts).
 */
export function supervisorEnvironment(
  home: string,
  parentInstance?: string,
  base: NodeJS.ProcessEnv = process.env,
): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {...base, ACTORS_HOME: home, ACTORS_BIN_DIR: binDir(), ACTORS_SUPERVISOR: '1'}
  // The lineage variables describe the *caller's* Run: a new supervisor never inherits them.
  for (const name of LINEAGE_VARS) delete env[name]
  delete env[LAUNCH_PARENT_VAR]
  if (parentInstance) env[LAUNCH_PARENT_VAR] = parentInstance
  return env
}
