// `actors autocomplete` is defined in src/lib/surface/cli/autocomplete.ts.
import {commandFromDefinition} from '../base-command.js'
import {autocompleteCommand} from '../../lib/surface/cli/autocomplete.js'

export default commandFromDefinition(autocompleteCommand)
