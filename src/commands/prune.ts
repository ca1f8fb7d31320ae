// `actors prune` is defined in src/lib/surface/cli/prune.ts.
import {commandFromDefinition} from './base-command.js'
import {pruneCommand} from '../lib/surface/cli/prune.js'

export default commandFromDefinition(pruneCommand)
