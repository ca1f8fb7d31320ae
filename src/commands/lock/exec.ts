// `actors lock exec` is defined in src/lib/cli/lock.ts.
import {commandFromDefinition} from '../base-command.js'
import {lockExecCommand} from '../../lib/cli/lock.js'

export default commandFromDefinition(lockExecCommand)
