// `actors autocomplete` is defined in src/lib/cli/autocomplete.ts.
import {commandFromDefinition} from '../base-command.js'
import {autocompleteCommand} from '../../lib/cli/autocomplete.js'

export default commandFromDefinition(autocompleteCommand)
