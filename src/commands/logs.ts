// `actors logs` is defined in src/lib/surface/cli/logs.ts, which the fast front end (src/boot/fast.ts) serves too.
import {commandFromDefinition} from './base-command.js'
import {logsCommand} from '../lib/surface/cli/logs.js'

export default commandFromDefinition(logsCommand)
