// `actors music serve` is defined in src/lib/cli/music.ts.
import {commandFromDefinition} from '../base-command.js'
import {musicServeCommand} from '../../lib/cli/music.js'

export default commandFromDefinition(musicServeCommand)
