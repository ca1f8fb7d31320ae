/**
 * The environment a new supervisor starts with, whichever executor starts it:
 * the caller's, minus the variables that describe the caller's own Run.
 */
import {binDir} from '../platform/package-root.js'

/** Lineage variables that describe the *caller's* Run: never inherited by a new supervisor. */
const LINEAGE_VARS = [
  'ACTORS_RUN',
  'ACTORS_RUN_INSTANCE',
  'ACTORS_STATE_DIR',
  'ACTORS_ROOT',
  'ACTORS_DEPTH',
  'ACTORS_OWNER',
  'ACTORS_GENERATION',
  'ACTORS_MESSAGE',
]

/** The supervisor's environment for a Run under the state root `home`. */
export function supervisorEnvironment(home: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {...process.env, ACTORS_HOME: home, ACTORS_BIN_DIR: binDir(), ACTORS_SUPERVISOR: '1'}
  for (const name of LINEAGE_VARS) delete env[name]
  return env
}
