/**
 * The base of every command: the global flags (`--home`, `--json`) and the
 * single place where errors become messages and exit codes. ActorsErrors are
 * user-facing (message + fix, documented exit code, no stack trace); oclif's
 * own parse errors are usage errors (exit 2); anything else is a bug.
 */
import {Command, Flags} from '@oclif/core'
import type {Interfaces} from '@oclif/core'

type FlagOutput = {[name: string]: unknown}
type ArgOutput = {[name: string]: unknown}
import {isActorsError, EXIT} from './lib/errors.js'
import {resolveHome} from './lib/home.js'
import {printJson} from './lib/output.js'

export abstract class ActorsCommand extends Command {
  static enableJsonFlag = true

  static baseFlags = {
    home: Flags.string({
      description: 'state root (default: $ACTORS_HOME, else $XDG_STATE_HOME/actors, else ~/.local/state/actors)',
      helpGroup: 'GLOBAL',
    }),
  }

  /**
   * oclif reads stdin (with a 10 ms timeout) to fill a missing positional
   * argument; for us stdin is never an argument (and may belong to the Run),
   * so every argument ignores it.
   */
  override async parse<F extends FlagOutput, B extends FlagOutput, A extends ArgOutput>(
    options?: Interfaces.Input<F, B, A>,
    argv?: string[],
  ): Promise<Interfaces.ParserOutput<F, B, A>> {
    // The command class's own and inherited statics (oclif spreads the input, so copy them explicitly).
    const input = options ?? (this.ctor as unknown as Interfaces.Input<F, B, A>)
    const args = Object.fromEntries(Object.entries(input.args ?? {}).map(([name, arg]) => [name, {...arg, ignoreStdin: true}]))
    const {flags, baseFlags, constraints, enableJsonFlag, strict, context} = input
    return super.parse({flags, baseFlags, constraints, enableJsonFlag, strict, context, '--': input['--'], args} as Interfaces.Input<F, B, A>, argv)
  }

  /** The state root for this invocation, from `--home` or the environment. */
  protected home(flags: {home?: string}): string {
    return resolveHome(flags.home)
  }

  /** Print JSON without oclif's colouring: agents parse this. */
  override logJson(json: unknown): void {
    printJson(json)
  }

  override async catch(error: Error & {exitCode?: number; oclif?: {exit?: number}}): Promise<void> {
    const json = this.jsonEnabled()
    if (isActorsError(error)) {
      process.exitCode = error.exitCode
      process.stderr.write(`actors: ${error.message}\n${error.fix ? `  fix: ${error.fix}\n` : ''}`)
      if (json) printJson({error: {message: error.message, exit_code: error.exitCode, fix: error.fix ?? null, ...error.details}})
      return
    }
    const oclifExit = error.oclif?.exit
    if (oclifExit !== undefined || error.name === 'CLIError' || /Parse|Flag|Arg/.test(error.constructor?.name ?? '')) {
      // oclif parser errors (unknown flag, missing argument, bad option value): usage, exit 2.
      const code = oclifExit === 0 ? 0 : EXIT.usage
      process.exitCode = code
      if (code !== 0) {
        process.stderr.write(`actors: ${error.message.trim()}\n  fix: see \`actors ${this.id?.replaceAll(':', ' ') ?? ''} --help\`\n`)
        if (json) printJson({error: {message: error.message.trim(), exit_code: code, fix: `actors ${this.id ?? ''} --help`}})
      }
      return
    }
    if ((error as NodeJS.ErrnoException).code === 'EEXIT') return
    process.exitCode = EXIT.failed
    process.stderr.write(`actors: internal error: ${error.message}\n`)
    if (process.env.ACTORS_DEBUG) process.stderr.write(`${error.stack}\n`)
    else process.stderr.write('  (set ACTORS_DEBUG=1 for the stack trace, and please report it)\n')
    if (json) printJson({error: {message: error.message, exit_code: EXIT.failed}})
  }
}
