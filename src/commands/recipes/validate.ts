// `actors recipes validate` is defined in src/lib/cli/recipes.ts.
import {commandFromDefinition} from '../base-command.js'
import {recipesValidateCommand} from '../../lib/cli/recipes.js'

export default commandFromDefinition(recipesValidateCommand)
