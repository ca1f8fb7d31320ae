// `actors music play` is defined in src/lib/cli/music.ts.
import {commandFromDefinition} from '../base-command.js'
import {musicPlayCommand} from '../../lib/cli/music.js'

export default commandFromDefinition(musicPlayCommand)
