// `actors lock status` is defined in src/lib/surface/cli/lock.ts.
import {commandFromDefinition} from '../base-command.js'
import {lockStatusCommand} from '../../lib/surface/cli/lock.js'

export default commandFromDefinition(lockStatusCommand)
