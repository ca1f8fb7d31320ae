// `actors lock acquire` is defined in src/lib/cli/lock.ts.
import {commandFromDefinition} from '../base-command.js'
import {lockAcquireCommand} from '../../lib/cli/lock.js'

export default commandFromDefinition(lockAcquireCommand)
