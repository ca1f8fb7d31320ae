// `actors autocomplete script` is defined in src/lib/cli/autocomplete.ts.
import {commandFromDefinition} from '../base-command.js'
import {autocompleteScriptCommand} from '../../lib/cli/autocomplete.js'

export default commandFromDefinition(autocompleteScriptCommand)
