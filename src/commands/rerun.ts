// `actors rerun` is defined in src/lib/cli/rerun.ts.
import {commandFromDefinition} from './base-command.js'
import {rerunCommand} from '../lib/cli/rerun.js'

export default commandFromDefinition(rerunCommand)
