// `actors music play` is defined in src/lib/surface/cli/music.ts.
import {commandFromDefinition} from '../base-command.js'
import {musicPlayCommand} from '../../lib/surface/cli/music.js'

export default commandFromDefinition(musicPlayCommand)
