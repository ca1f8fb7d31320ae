import {Flags} from '@oclif/core'
import {ActorsCommand} from '../../base-command.js'
import {renderPlainLines} from '../../lib/music/plain.js'
import {runPlayback, type PlaybackRunResult} from '../../lib/music/runner.js'
import {musicArgs, musicFlags, normalizeBoolArgv, playbackOptions} from './play.js'

export default class MusicServe extends ActorsCommand {
  static summary = 'Run a playback service controlled with `actors control DIR ACTION`'
  static description = [
    'Writes DIR/playback-endpoint.json {owner_mode: "standalone", path, service_instance_id, service_pid} and serves',
    'play, pause, toggle, next, previous, seek PERCENT, volume PERCENT, stop and status on its Unix socket;',
    'DIR/playback.json is the checkpoint a restarted service resumes from. Runs in the foreground (append & to background it).',
    'Inside a Run whose state dir is DIR (recipes/music/playback) it serves the Run\'s control endpoint instead.',
  ].join(' ')
  static examples = [
    '<%= config.bin %> music serve ~/Music --state-dir /tmp/player &',
    '<%= config.bin %> control /tmp/player volume 30',
    '<%= config.bin %> control /tmp/player status --json',
  ]
  static strict = false
  static args = musicArgs
  static flags = {
    ...musicFlags,
    'state-dir': Flags.string({description: 'directory for playback-endpoint.json, the socket and playback.json', required: true}),
  }

  async run(): Promise<PlaybackRunResult> {
    const {argv, flags} = await this.parse(MusicServe, normalizeBoolArgv(this.argv, ['loop', 'shuffle']))
    return runPlayback(
      playbackOptions(argv, flags, (service) => {
        if (!this.jsonEnabled()) renderPlainLines(service)
      }),
    )
  }
}
