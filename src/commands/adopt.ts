// `actors adopt` is defined in src/lib/surface/cli/adopt.ts.
import {commandFromDefinition} from './base-command.js'
import {adoptCommand} from '../lib/surface/cli/adopt.js'

export default commandFromDefinition(adoptCommand)
