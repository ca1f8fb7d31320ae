// `actors send` is defined in src/lib/surface/cli/send.ts.
import {commandFromDefinition} from './base-command.js'
import {sendCommand} from '../lib/surface/cli/send.js'

export default commandFromDefinition(sendCommand)
