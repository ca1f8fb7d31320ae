// `actors close` is defined in src/lib/surface/cli/close.ts.
import {commandFromDefinition} from './base-command.js'
import {closeCommand} from '../lib/surface/cli/close.js'

export default commandFromDefinition(closeCommand)
