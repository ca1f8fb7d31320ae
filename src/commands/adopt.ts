// `actors adopt` is defined in src/lib/cli/adopt.ts.
import {commandFromDefinition} from './base-command.js'
import {adoptCommand} from '../lib/cli/adopt.js'

export default commandFromDefinition(adoptCommand)
