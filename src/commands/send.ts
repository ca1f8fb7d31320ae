// `actors send` is defined in src/lib/cli/send.ts.
import {commandFromDefinition} from './base-command.js'
import {sendCommand} from '../lib/cli/send.js'

export default commandFromDefinition(sendCommand)
