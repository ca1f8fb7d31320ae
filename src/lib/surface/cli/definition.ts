/**
 * A command as plain data: its flags, arguments and the function that does the
 * work. Every command is written this way, so that one definition serves both
 * front ends (the hot ones, src/lib/surface/cli/hot-commands.ts, through both):
 *  - src/commands/base-command.ts turns a definition into an oclif command (help,
 *    manifest, every error message about flags);
 *  - src/boot/fast.ts parses clean invocations itself and runs them without loading
 *    oclif at all, because oclif's start-up alone costs more than the whole
 *    launch budget (README.md, "Layout").
 * Definitions must not import oclif.
 */
import type {CommandResult} from '../present/result.js'

export type FlagDefinition =
  | {
      type: 'boolean'
      description: string
      char?: string /** `--no-NAME` sets it false. */
      allowNo?: boolean
      default?: boolean
    }
  | {
      type: 'string'
      description: string /** The only values accepted. */
      options?: readonly string[]
      default?: string
      required?: boolean
    }
  | {type: 'integer'; description: string; min?: number; max?: number; default?: number; required?: boolean}

export interface ArgDefinition {
  description: string
  required?: boolean
}

/** A flag's value as `run` sees it: never undefined for booleans, nor when the flag has a default or is required. */
type FlagValue<D extends FlagDefinition> = D extends {type: 'boolean'}
  ? boolean
  : D extends {default: string | number} | {required: true}
    ? D extends {type: 'integer'}
      ? number
      : string
    : D extends {type: 'integer'}
      ? number | undefined
      : string | undefined

/** What a command's `run` receives, the same whichever front end parsed it. */
export interface Invocation<
  F extends Record<string, FlagDefinition> = Record<string, FlagDefinition>,
  A extends Record<string, ArgDefinition> = Record<string, ArgDefinition>,
> {
  args: {[K in keyof A]: string | undefined}
  /** Every positional token in order, including those after `--` (commands that take a variable number read these). */
  argv: string[]
  /** The tokens after the first `--`, or undefined when there is none (`actors run -- COMMAND`). */
  passthrough: string[] | undefined
  flags: {[K in keyof F]: FlagValue<F[K]>} & {home: string | undefined}
  /**
   * `--json` given (before any `--`), or ACTORS_CONTENT_TYPE=json. For the
   * front end's output step (src/lib/surface/present/present.ts): definitions return
   * results and never read it.
   */
  json: boolean
}

export interface CommandDefinition<
  F extends Record<string, FlagDefinition> = Record<string, FlagDefinition>,
  A extends Record<string, ArgDefinition> = Record<string, ArgDefinition>,
> {
  /** The oclif id: words joined by ':' (`music:play`). */
  id: string
  summary: string
  description?: string
  examples: string[]
  /** false: any number of positional tokens (collected in `argv`). */
  strict?: boolean
  args: A
  flags: F
  /**
   * Rewrite the tokens before either front end parses them (e.g. `--loop=false`,
   * as Recipe templates render bools, into oclif's `--no-loop`). Throws
   * ActorsErrors for what it refuses.
   */
  normalizeArgv?: (tokens: string[]) => string[]
  /**
   * Do the work and return the result (src/lib/surface/present/result.ts): the front
   * end shows it as JSON, plain text or Ink. A definition never prints.
   */
  run(invocation: Invocation<F, A>): Promise<CommandResult>
}

/** Any definition, whatever its flags and arguments (what the front ends take). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyCommandDefinition = CommandDefinition<any, any>

/** Identity function that lets TypeScript infer a definition's flag and argument types. */
export function defineCommand<
  const F extends Record<string, FlagDefinition>,
  const A extends Record<string, ArgDefinition>,
>(definition: CommandDefinition<F, A>): CommandDefinition<F, A> {
  return definition
}

/**
 * Flags that were not given take their default, and booleans without one are
 * false (oclif leaves those undefined), so both front ends hand `run` the same.
 */
export function withFlagDefaults(
  definition: AnyCommandDefinition,
  flags: Record<string, unknown>,
): Record<string, unknown> {
  for (const [name, flag] of Object.entries(definition.flags as Record<string, FlagDefinition>)) {
    if (flags[name] === undefined && flag.default !== undefined) flags[name] = flag.default
    if (flag.type === 'boolean') flags[name] ??= false
  }
  return flags
}

/** The flag every command takes besides `--json`. */
export const HOME_FLAG = {
  type: 'string',
  description: 'state root (default: $ACTORS_HOME, else $XDG_STATE_HOME/actors, else ~/.local/state/actors)',
} as const satisfies FlagDefinition

/** oclif's rule for `--json`: present before any `--`, or the CLI's CONTENT_TYPE variable says json. */
export function jsonRequested(argv: string[], env: NodeJS.ProcessEnv = process.env): boolean {
  if (env.ACTORS_CONTENT_TYPE?.toLowerCase() === 'json') return true
  const end = argv.indexOf('--')
  return (end === -1 ? argv : argv.slice(0, end)).includes('--json')
}
