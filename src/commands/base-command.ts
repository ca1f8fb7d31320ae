/**
 * The base of every oclif command: the global flags (`--home`, `--json`) and
 * errors turned into messages and exit codes (by reportError, shared with the
 * fast front end). `commandFromDefinition` makes an oclif command out of a
 * plain command definition (src/lib/surface/cli/definition.ts).
 */
import {Args, Command, Flags} from '@oclif/core'
import type {Interfaces} from '@oclif/core'
import {followUpEndedRuns} from '../lib/services/tree/after-run.js'
import {restoreArgv, shortenArgv} from '../lib/surface/cli/long-argv.js'
import {
  HOME_FLAG,
  withFlagDefaults,
  type AnyCommandDefinition,
  type ArgDefinition,
  type FlagDefinition,
  type Invocation,
} from '../lib/surface/cli/definition.js'
import {resolveHome} from '../lib/base/platform/home.js'
import {present} from '../lib/surface/present/present.js'
import {reportError} from '../lib/surface/present/report-error.js'
import {printJson} from '../lib/surface/present/write.js'

type FlagOutput = {[name: string]: unknown}
type ArgOutput = {[name: string]: unknown}

export abstract class ActorsCommand extends Command {
  static enableJsonFlag = true

  static baseFlags = {home: Flags.string({description: HOME_FLAG.description, helpGroup: 'GLOBAL'})}

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
    const args = Object.fromEntries(
      Object.entries(input.args ?? {}).map(([name, arg]) => [name, {...arg, ignoreStdin: true}]),
    )
    const {flags, baseFlags, constraints, enableJsonFlag, strict, context} = input
    return super.parse(
      {flags, baseFlags, constraints, enableJsonFlag, strict, context, '--': input['--'], args} as Interfaces.Input<
        F,
        B,
        A
      >,
      argv,
    )
  }

  /** The state root for this invocation, from `--home` or the environment. */
  protected home(flags: {home?: string}): string {
    return resolveHome(flags.home)
  }

  /** Print JSON without oclif's colouring: agents parse this. */
  override logJson(json: unknown): void {
    printJson(json)
  }

  /** After every command: the follow-ups of Runs its reads settled (queued siblings start), outside every lock. */
  override async finally(error: Error | undefined): Promise<unknown> {
    followUpEndedRuns()
    return super.finally(error)
  }

  override async catch(error: Error): Promise<void> {
    // A parse error is reported here; without this, oclif (under NODE_ENV=development or test)
    // adds a warning that the command "did not parse its arguments".
    this.parsed = true
    reportError(error, this.jsonEnabled(), this.id)
  }
}

/** An oclif command class serving `definition`: oclif parses, then the definition runs. */
export function commandFromDefinition(definition: AnyCommandDefinition): typeof ActorsCommand {
  return class extends ActorsCommand {
    static override summary = definition.summary
    static override description = definition.description
    static override examples = definition.examples
    static override strict = definition.strict !== false
    static override args = Object.fromEntries(
      Object.entries(definition.args as Record<string, ArgDefinition>).map(([name, arg]) => [
        name,
        Args.string({description: arg.description, required: arg.required ?? false}),
      ]),
    )
    static override flags = Object.fromEntries(
      Object.entries(definition.flags as Record<string, FlagDefinition>).map(([name, flag]) => [name, oclifFlag(flag)]),
    )

    /** Runs the definition and shows its result (src/lib/surface/present/present.ts); returns nothing, so oclif prints nothing of its own. */
    async run(): Promise<undefined> {
      const argv = definition.normalizeArgv ? definition.normalizeArgv(this.argv) : this.argv
      // oclif is quadratic in positional words: it parses only the ones that can matter (src/lib/surface/cli/long-argv.ts).
      const {parsed: shortened, left} = shortenArgv(definition, argv)
      const parsed = await this.parse(undefined, shortened).catch((error) => {
        throw unexpectedArgsInFull(error, argv, left)
      })
      this.argv = argv
      const dash = argv.indexOf('--')
      const flags = withFlagDefaults(definition, {...parsed.flags})
      const invocation: Invocation = {
        args: parsed.args as Invocation['args'],
        argv: restoreArgv(argv, parsed.argv as string[], left),
        passthrough: dash === -1 ? undefined : argv.slice(dash + 1),
        flags: flags as Invocation['flags'],
        json: this.jsonEnabled(),
      }
      await present(await definition.run(invocation), invocation.json)
      return undefined
    }
  }
}

/**
 * oclif's "Unexpected arguments" for a strict command names the words it saw;
 * with words left out of its parse (shortenArgv), the same error naming all
 * of them, as oclif would have. Any other error unchanged.
 */
function unexpectedArgsInFull(error: unknown, argv: string[], left: string[]): unknown {
  const parse = (error as {parse?: {input: {args: object}; output: {argv: string[]}}}).parse
  if (left.length === 0 || parse === undefined || !(error instanceof Error)) return error
  if (!/^Unexpected arguments?: /.test(error.message)) return error
  const extras = restoreArgv(argv, parse.output.argv, left).slice(Object.keys(parse.input.args).length)
  const Unexpected = error.constructor as new (options: {args: string[]; parse: unknown}) => Error
  return new Unexpected({args: extras, parse})
}

/** The oclif flag for a flag definition (exported for the parser parity test). */
export function oclifFlag(flag: FlagDefinition) {
  switch (flag.type) {
    case 'boolean':
      return Flags.boolean({
        description: flag.description,
        char: flag.char as Interfaces.AlphabetLowercase | undefined,
        allowNo: flag.allowNo ?? false,
        default: flag.default,
      })
    case 'integer':
      return Flags.integer({
        description: flag.description,
        min: flag.min,
        max: flag.max,
        default: flag.default,
        required: flag.required ?? false,
      })
    case 'string':
      return Flags.string({
        description: flag.description,
        options: flag.options ? [...flag.options] : undefined,
        default: flag.default,
        required: flag.required ?? false,
      })
  }
}
