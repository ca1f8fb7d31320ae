// `actors version` is defined in src/lib/cli/version.ts.
import {commandFromDefinition} from './base-command.js'
import {versionCommand} from '../lib/cli/version.js'

export default commandFromDefinition(versionCommand)
