// `actors control` is defined in src/lib/surface/cli/control.ts, which the fast front end (src/boot/fast.ts) serves too.
import {commandFromDefinition} from './base-command.js'
import {controlCommand} from '../lib/surface/cli/control.js'

export default commandFromDefinition(controlCommand)
