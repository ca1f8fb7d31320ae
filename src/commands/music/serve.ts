// `actors music serve` is defined in src/lib/surface/cli/music.ts.
import {commandFromDefinition} from '../base-command.js'
import {musicServeCommand} from '../../lib/surface/cli/music.js'

export default commandFromDefinition(musicServeCommand)
