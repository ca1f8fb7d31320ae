// `actors lock status` is defined in src/lib/cli/lock.ts.
import {commandFromDefinition} from '../base-command.js'
import {lockStatusCommand} from '../../lib/cli/lock.js'

export default commandFromDefinition(lockStatusCommand)
