// `actors inbox` is defined in src/lib/cli/inbox.ts.
import {commandFromDefinition} from './base-command.js'
import {inboxCommand} from '../lib/cli/inbox.js'

export default commandFromDefinition(inboxCommand)
