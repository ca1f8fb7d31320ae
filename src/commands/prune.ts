// `actors prune` is defined in src/lib/cli/prune.ts.
import {commandFromDefinition} from './base-command.js'
import {pruneCommand} from '../lib/cli/prune.js'

export default commandFromDefinition(pruneCommand)
