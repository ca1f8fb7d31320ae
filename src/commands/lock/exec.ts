// `actors lock exec` is defined in src/lib/surface/cli/lock.ts.
import {commandFromDefinition} from '../base-command.js'
import {lockExecCommand} from '../../lib/surface/cli/lock.js'

export default commandFromDefinition(lockExecCommand)
