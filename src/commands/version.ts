// `actors version` is defined in src/lib/surface/cli/version.ts.
import {commandFromDefinition} from './base-command.js'
import {versionCommand} from '../lib/surface/cli/version.js'

export default commandFromDefinition(versionCommand)
