// `actors lock acquire` is defined in src/lib/surface/cli/lock.ts.
import {commandFromDefinition} from '../base-command.js'
import {lockAcquireCommand} from '../../lib/surface/cli/lock.js'

export default commandFromDefinition(lockAcquireCommand)
