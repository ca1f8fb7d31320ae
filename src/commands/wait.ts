// `actors wait` is defined in src/lib/surface/cli/wait.ts, which the fast front end (src/boot/fast.ts) serves too.
import {commandFromDefinition} from './base-command.js'
import {waitCommand} from '../lib/surface/cli/wait.js'

export default commandFromDefinition(waitCommand)
