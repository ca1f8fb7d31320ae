/**
 * A command as plain data: its flags, arguments and the function that does the
 * work. Every command is written this way, so that one definition serves both
 * front ends (the hot ones, src/lib/cli/hot-commands.ts, through both):
 *  - src/base-command.ts turns a definition into an oclif command (help,
 *    manifest, every error message about flags);
 *  - src/fast.ts parses clean invocations itself and runs them without loading
 *    oclif at all, because oclif's start-up alone costs more than the whole
 *    launch budget (README.md, "Layout").
 * Definitions must not import oclif.
 */
import {EXIT, isActorsError} from '../errors.js'
import {printJson} from '../output.js'
import {isOutputError, stdoutFailure} from '../output-guard.js'

export type FlagDefinition =
  | {type: 'boolean'; description: string; char?: string; /** `--no-NAME` sets it false. */ allowNo?: boolean; default?: boolean}
  | {type: 'string'; description: string; /** The only values accepted. */ options?: readonly string[]; default?: string; required?: boolean}
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
export interface Invocation<F extends Record<string, FlagDefinition> = Record<string, FlagDefinition>, A extends Record<string, ArgDefinition> = Record<string, ArgDefinition>> {
  args: {[K in keyof A]: string | undefined}
  /** Every positional token in order, including those after `--` (commands that take a variable number read these). */
  argv: string[]
  /** The tokens after the first `--`, or undefined when there is none (`actors run -- COMMAND`). */
  passthrough: string[] | undefined
  flags: {[K in keyof F]: FlagValue<F[K]>} & {home: string | undefined}
  /** `--json` given (before any `--`), or ACTORS_CONTENT_TYPE=json. */
  json: boolean
}

export interface CommandDefinition<F extends Record<string, FlagDefinition> = Record<string, FlagDefinition>, A extends Record<string, ArgDefinition> = Record<string, ArgDefinition>> {
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
  /** Do the work. A returned value is printed as the JSON document under --json. */
  run(invocation: Invocation<F, A>): Promise<unknown>
}

/** Any definition, whatever its flags and arguments (what the front ends take). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyCommandDefinition = CommandDefinition<any, any>

/** Identity function that lets TypeScript infer a definition's flag and argument types. */
export function defineCommand<const F extends Record<string, FlagDefinition>, const A extends Record<string, ArgDefinition>>(
  definition: CommandDefinition<F, A>,
): CommandDefinition<F, A> {
  return definition
}

/**
 * Flags that were not given take their default, and booleans without one are
 * false (oclif leaves those undefined), so both front ends hand `run` the same.
 */
export function withFlagDefaults(definition: AnyCommandDefinition, flags: Record<string, unknown>): Record<string, unknown> {
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

/** Print a command's result the way oclif does: as JSON under --json, when there is one. */
export function printResult(result: unknown, json: boolean): void {
  if (result && json) printJson(result)
}

/**
 * The single place where a failure becomes a message and an exit code.
 * ActorsErrors are user-facing (message, fix, documented exit code, no stack
 * trace); oclif's parse errors are usage errors (exit 2); anything else is a bug.
 */
export function reportError(error: Error & {code?: string; syscall?: string; oclif?: {exit?: number}}, json: boolean, commandId: string | undefined): void {
  if (isActorsError(error)) {
    process.exitCode = error.exitCode
    process.stderr.write(`actors: ${error.message}\n${error.fix ? `  fix: ${error.fix}\n` : ''}`)
    if (json) printJson({error: {message: error.message, exit_code: error.exitCode, fix: error.fix ?? null, ...error.details}})
    return
  }
  const oclifExit = error.oclif?.exit
  if (oclifExit !== undefined || error.name === 'CLIError' || /Parse|Flag|Arg/.test(error.constructor?.name ?? '')) {
    const code = oclifExit === 0 ? 0 : EXIT.usage
    process.exitCode = code
    if (code !== 0) {
      const id = commandId?.replaceAll(':', ' ') ?? ''
      process.stderr.write(`actors: ${error.message.trim()}\n  fix: see \`actors ${id} --help\`\n`)
      if (json) printJson({error: {message: error.message.trim(), exit_code: code, fix: `actors ${id} --help`}})
    }
    return
  }
  if (error.code === 'EEXIT') return
  // stdout went away (the output guard already said so, or a closed pipe needs no words) or a file system is full.
  if (error === stdoutFailure() || error.code === 'EPIPE' || error.code === 'ERR_STREAM_DESTROYED') return
  if (error.code === 'ENOSPC' || error.code === 'EDQUOT' || (isOutputError(error) && error.syscall === 'write')) {
    process.exitCode = EXIT.failed
    process.stderr.write(`actors: ${error.code === 'EDQUOT' ? 'disk quota exceeded' : error.code === 'ENOSPC' ? 'no space left on the device' : error.message}\n  fix: free space in the state root ($ACTORS_HOME) and where the output goes, then retry\n`)
    return
  }
  process.exitCode = EXIT.failed
  process.stderr.write(`actors: internal error: ${error.message}\n`)
  if (process.env.ACTORS_DEBUG) process.stderr.write(`${error.stack}\n`)
  else process.stderr.write('  (set ACTORS_DEBUG=1 for the stack trace, and please report it)\n')
  if (json) printJson({error: {message: error.message, exit_code: EXIT.failed}})
}
