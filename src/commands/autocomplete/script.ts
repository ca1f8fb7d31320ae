// `actors autocomplete script` is defined in src/lib/surface/cli/autocomplete.ts.
import {commandFromDefinition} from '../base-command.js'
import {autocompleteScriptCommand} from '../../lib/surface/cli/autocomplete.js'

export default commandFromDefinition(autocompleteScriptCommand)
