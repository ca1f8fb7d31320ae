// `actors lock renew` is defined in src/lib/surface/cli/lock.ts.
import {commandFromDefinition} from '../base-command.js'
import {lockRenewCommand} from '../../lib/surface/cli/lock.js'

export default commandFromDefinition(lockRenewCommand)
