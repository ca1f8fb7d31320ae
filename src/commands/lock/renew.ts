// `actors lock renew` is defined in src/lib/cli/lock.ts.
import {commandFromDefinition} from '../base-command.js'
import {lockRenewCommand} from '../../lib/cli/lock.js'

export default commandFromDefinition(lockRenewCommand)
