/** `actors music play` (foreground) and `actors music serve` (a standalone playback service): one service core. */
import {usageError} from '../../base/platform/errors.js'
import {showPlayback} from '../present/playback.js'
import {writeNote} from '../present/write.js'
import {inertText} from '../../base/platform/text.js'
import {runPlayback, type RunPlaybackOptions} from '../../services/music/runner.js'
import {PLAYER_NAMES} from '../../services/music/types.js'
import {defineCommand, type FlagDefinition} from './definition.js'

/** The SOURCE argument of both. */
const musicArgs = {
  source: {description: 'file, directory, URL, playlist, or "a|b|c" list (repeatable)', required: true},
} as const

/** Flags shared by both (the same service core). */
const musicFlags = {
  player: {type: 'string', description: 'audio player', options: ['auto', ...PLAYER_NAMES], default: 'auto'},
  loop: {
    type: 'boolean',
    description: 'start over after the last track (--no-loop: stop there)',
    allowNo: true,
    default: true,
  },
  shuffle: {type: 'boolean', description: 'play the queue in random order (kept across restarts)', default: false},
  volume: {type: 'integer', description: "volume 0-100 (default: the checkpoint's, else 70)", min: 0, max: 100},
  output: {
    type: 'string',
    description: 'default, or null: play in real time to no audio device (env ACTORS_MUSIC_OUTPUT)',
    options: ['default', 'null'],
  },
} as const satisfies Record<string, FlagDefinition>

/**
 * Recipe templates render bools as `--loop=true`/`--loop=false`; boolean
 * flags take no value, so turn those into `--loop`/`--no-loop` first.
 */
export function normalizeBoolArgv(argv: string[], names: string[] = ['loop', 'shuffle']): string[] {
  const end = argv.indexOf('--')
  return argv
    .map((arg, i) => {
      const m = end !== -1 && i > end ? null : /^--([a-z-]+)=(.*)$/.exec(arg)
      if (!m || !names.includes(m[1])) return arg
      const value = m[2].toLowerCase()
      if (['true', 'yes', '1'].includes(value)) return `--${m[1]}`
      if (['false', 'no', '0'].includes(value)) return m[1] === 'loop' ? '--no-loop' : ''
      throw usageError(`--${m[1]}=${m[2]} is not a boolean`, `use --${m[1]} or --${m[1]}=false`)
    })
    .filter((arg) => arg !== '')
}

/** runPlayback's options from the SOURCE words and the shared flags. */
function playbackOptions(
  argv: string[],
  flags: {player: string; loop: boolean; shuffle: boolean; volume?: number; output?: string; 'state-dir'?: string},
  onService: RunPlaybackOptions['onService'],
): RunPlaybackOptions {
  return {
    sources: argv,
    player: flags.player,
    loop: flags.loop,
    shuffle: flags.shuffle,
    volume: flags.volume,
    output: flags.output,
    stateDir: flags['state-dir'],
    // A warning may quote a track name or a playlist line: inert on the terminal.
    warn: (message) => writeNote(`actors: ${inertText(message, {multiline: true})}\n`),
    onService,
  }
}

export const musicPlayCommand = defineCommand({
  id: 'music:play',
  summary: 'Play music in the foreground: files, directories, URLs, m3u/pls playlists',
  description: [
    'SOURCE may be repeated or "|"-separated; directories are searched recursively for audio files in natural order.',
    'Without a TTY (or with CI set) prints one line per track change; SIGINT/SIGTERM stop the player cleanly.',
    'With --state-dir it also checkpoints to DIR/playback.json and accepts `actors control DIR ACTION` like `music serve`.',
  ].join(' '),
  examples: [
    '<%= config.bin %> music play ~/Music/album',
    '<%= config.bin %> music play "a.mp3|b.flac" --no-loop --volume 40',
    'ACTORS_MUSIC_OUTPUT=null <%= config.bin %> music play list.m3u --player ffplay',
  ],
  strict: false,
  args: musicArgs,
  flags: {
    ...musicFlags,
    'state-dir': {type: 'string', description: 'also checkpoint and serve controls in this directory'},
  },
  normalizeArgv: (tokens) => normalizeBoolArgv(tokens),

  async run({argv, flags}) {
    // On a TTY the now-playing view mounts on the service; its keys send the service's own requests.
    return showPlayback((onService) => runPlayback(playbackOptions(argv, flags, onService)), {ink: true})
  },
})

export const musicServeCommand = defineCommand({
  id: 'music:serve',
  summary: 'Run a playback service controlled with `actors control DIR ACTION`',
  description: [
    'Writes DIR/playback-endpoint.json {owner_mode: "standalone", path, service_instance_id, service_pid} and serves',
    'play (alias resume), pause, toggle, next, previous, seek PERCENT, volume PERCENT, stop and status on its Unix socket;',
    'DIR/playback.json is the checkpoint a restarted service resumes from. Runs in the foreground (append & to background it).',
    "Inside a Run whose state dir is DIR (recipes/music/playback) it serves the Run's control endpoint instead.",
  ].join(' '),
  examples: [
    '<%= config.bin %> music serve ~/Music --state-dir /tmp/player &',
    '<%= config.bin %> control /tmp/player volume 30',
    '<%= config.bin %> control /tmp/player status --json',
  ],
  strict: false,
  args: musicArgs,
  flags: {
    ...musicFlags,
    'state-dir': {
      type: 'string',
      description: 'directory for playback-endpoint.json, the socket and playback.json',
      required: true,
    },
  },
  normalizeArgv: (tokens) => normalizeBoolArgv(tokens),

  async run({argv, flags}) {
    // Its log stays plain on a terminal too.
    return showPlayback((onService) => runPlayback(playbackOptions(argv, flags, onService)), {ink: false})
  },
})
