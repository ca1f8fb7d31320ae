// `actors recipes validate` is defined in src/lib/surface/cli/recipes.ts.
import {commandFromDefinition} from '../base-command.js'
import {recipesValidateCommand} from '../../lib/surface/cli/recipes.js'

export default commandFromDefinition(recipesValidateCommand)
