// `actors run` is defined in src/lib/surface/cli/run.ts, which the fast front end (src/boot/fast.ts) serves too.
import {commandFromDefinition} from './base-command.js'
import {runCommand} from '../lib/surface/cli/run.js'

export default commandFromDefinition(runCommand)
