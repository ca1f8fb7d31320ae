// `actors lock release` is defined in src/lib/surface/cli/lock.ts.
import {commandFromDefinition} from '../base-command.js'
import {lockReleaseCommand} from '../../lib/surface/cli/lock.js'

export default commandFromDefinition(lockReleaseCommand)
