/**
 * The environment a new supervisor starts with, whichever executor starts it:
 * the caller's, minus the variables that describe the caller's own Run.
 */
import {binDir} from '../../base/platform/package-root.js'
import {LINEAGE_VARS} from '../runs/lineage.js'

/** The supervisor's environment for a Run under the state root `home`. */
export function supervisorEnvironment(home: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {...process.env, ACTORS_HOME: home, ACTORS_BIN_DIR: binDir(), ACTORS_SUPERVISOR: '1'}
  // The lineage variables describe the *caller's* Run: a new supervisor never inherits them.
  for (const name of LINEAGE_VARS) delete env[name]
  return env
}
