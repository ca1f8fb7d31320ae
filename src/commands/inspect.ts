// `actors inspect` is defined in src/lib/surface/cli/inspect.ts, which the fast front end (src/boot/fast.ts) serves too.
import {commandFromDefinition} from './base-command.js'
import {inspectCommand} from '../lib/surface/cli/inspect.js'

export default commandFromDefinition(inspectCommand)
