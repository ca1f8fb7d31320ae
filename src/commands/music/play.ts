import {Args, Flags} from '@oclif/core'
import {ActorsCommand} from '../../base-command.js'
import {usageError} from '../../lib/errors.js'
import {renderPlainLines} from '../../lib/music/plain.js'
import {runPlayback, type PlaybackRunResult, type RunPlaybackOptions} from '../../lib/music/runner.js'
import {PLAYER_NAMES} from '../../lib/music/types.js'
import {decideOutput} from '../../lib/output.js'
import {importView} from '../../lib/esm-import.js'

/** The SOURCE argument of `music play` and `music serve`. */
export const musicArgs = {source: Args.string({description: 'file, directory, URL, playlist, or "a|b|c" list (repeatable)', required: true})}

/** Flags shared by `music play` and `music serve` (the same service core). */
export const musicFlags = {
  player: Flags.string({description: 'audio player', options: ['auto', ...PLAYER_NAMES], default: 'auto'}),
  loop: Flags.boolean({description: 'start over after the last track (--no-loop: stop there)', allowNo: true, default: true}),
  shuffle: Flags.boolean({description: 'play the queue in random order (kept across restarts)', default: false}),
  volume: Flags.integer({description: 'volume 0-100 (default: the checkpoint\'s, else 70)', min: 0, max: 100}),
  output: Flags.string({description: 'default, or null: play in real time to no audio device (env ACTORS_MUSIC_OUTPUT)', options: ['default', 'null']}),
}

/**
 * Recipe templates render bools as `--loop=true`/`--loop=false`; oclif's
 * boolean flags take no value, so turn those into `--loop`/`--no-loop` first.
 */
export function normalizeBoolArgv(argv: string[], names: string[]): string[] {
  return argv.map((arg) => {
    const m = /^--([a-z-]+)=(.*)$/.exec(arg)
    if (!m || !names.includes(m[1])) return arg
    const value = m[2].toLowerCase()
    if (['true', 'yes', '1'].includes(value)) return `--${m[1]}`
    if (['false', 'no', '0'].includes(value)) return m[1] === 'loop' ? '--no-loop' : ''
    throw usageError(`--${m[1]}=${m[2]} is not a boolean`, `use --${m[1]} or --${m[1]}=false`)
  }).filter((arg) => arg !== '')
}

/** runPlayback's options from the SOURCE words and the shared flags (`music play` and `music serve`). */
export function playbackOptions(
  argv: unknown[],
  flags: {player: string; loop: boolean; shuffle: boolean; volume?: number; output?: string; 'state-dir'?: string},
  onService: RunPlaybackOptions['onService'],
): RunPlaybackOptions {
  return {
    sources: argv as string[],
    player: flags.player,
    loop: flags.loop,
    shuffle: flags.shuffle,
    volume: flags.volume,
    output: flags.output,
    stateDir: flags['state-dir'],
    warn: (message) => process.stderr.write(`actors: ${message}\n`),
    onService,
  }
}

export default class MusicPlay extends ActorsCommand {
  static summary = 'Play music in the foreground: files, directories, URLs, m3u/pls playlists'
  static description = [
    'SOURCE may be repeated or "|"-separated; directories are searched recursively for audio files in natural order.',
    'Without a TTY (or with CI set) prints one line per track change; SIGINT/SIGTERM stop the player cleanly.',
    'With --state-dir it also checkpoints to DIR/playback.json and accepts `actors control DIR ACTION` like `music serve`.',
  ].join(' ')
  static examples = [
    '<%= config.bin %> music play ~/Music/album',
    '<%= config.bin %> music play "a.mp3|b.flac" --no-loop --volume 40',
    'ACTORS_MUSIC_OUTPUT=null <%= config.bin %> music play list.m3u --player ffplay',
  ]
  static strict = false
  static args = musicArgs
  static flags = {
    ...musicFlags,
    'state-dir': Flags.string({description: 'also checkpoint and serve controls in this directory'}),
  }

  async run(): Promise<PlaybackRunResult> {
    const {argv, flags} = await this.parse(MusicPlay, normalizeBoolArgv(this.argv, ['loop', 'shuffle']))
    const json = this.jsonEnabled()
    // On a TTY the now-playing view mounts on the service; its keys send the service's own requests.
    const mode = decideOutput(json)
    const view = mode === 'ink' ? await importView<typeof import('../../views/now-playing-live.js')>('now-playing-live') : undefined
    let nowPlaying: {close(): Promise<void>} | undefined
    try {
      return await runPlayback(
        playbackOptions(argv, flags, (service) => {
          if (view) nowPlaying = view.mountNowPlaying(service)
          else if (mode !== 'json') renderPlainLines(service)
        }),
      )
    } finally {
      await nowPlaying?.close()
    }
  }
}
