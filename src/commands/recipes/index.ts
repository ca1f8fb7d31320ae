// `actors recipes` is defined in src/lib/cli/recipes.ts.
import {commandFromDefinition} from '../base-command.js'
import {recipesCommand} from '../../lib/cli/recipes.js'

export default commandFromDefinition(recipesCommand)
