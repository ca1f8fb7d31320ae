// `actors logs` is defined in src/lib/cli/logs.ts, which the fast front end (src/boot/fast.ts) serves too.
import {commandFromDefinition} from './base-command.js'
import {logsCommand} from '../lib/cli/logs.js'

export default commandFromDefinition(logsCommand)
