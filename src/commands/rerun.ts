// `actors rerun` is defined in src/lib/surface/cli/rerun.ts.
import {commandFromDefinition} from './base-command.js'
import {rerunCommand} from '../lib/surface/cli/rerun.js'

export default commandFromDefinition(rerunCommand)
