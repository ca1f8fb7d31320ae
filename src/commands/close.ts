// `actors close` is defined in src/lib/cli/close.ts.
import {commandFromDefinition} from './base-command.js'
import {closeCommand} from '../lib/cli/close.js'

export default commandFromDefinition(closeCommand)
