// `actors inbox` is defined in src/lib/surface/cli/inbox.ts.
import {commandFromDefinition} from './base-command.js'
import {inboxCommand} from '../lib/surface/cli/inbox.js'

export default commandFromDefinition(inboxCommand)
