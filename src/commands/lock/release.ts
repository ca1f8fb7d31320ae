// `actors lock release` is defined in src/lib/cli/lock.ts.
import {commandFromDefinition} from '../base-command.js'
import {lockReleaseCommand} from '../../lib/cli/lock.js'

export default commandFromDefinition(lockReleaseCommand)
