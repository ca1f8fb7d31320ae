// `actors emit` is defined in src/lib/surface/cli/emit.ts, which the fast front end (src/boot/fast.ts) serves too.
import {commandFromDefinition} from './base-command.js'
import {emitCommand} from '../lib/surface/cli/emit.js'

export default commandFromDefinition(emitCommand)
