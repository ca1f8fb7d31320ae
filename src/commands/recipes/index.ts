// `actors recipes` is defined in src/lib/surface/cli/recipes.ts.
import {commandFromDefinition} from '../base-command.js'
import {recipesCommand} from '../../lib/surface/cli/recipes.js'

export default commandFromDefinition(recipesCommand)
