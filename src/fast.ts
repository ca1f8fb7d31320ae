/**
 * The fast front end (bundled to dist/fast.cjs, which bin/actors loads first).
 * It serves the hot commands (run, inspect, control, wait, emit, logs) without
 * loading oclif, whose start-up alone costs about 25 ms, more than the whole
 * launch budget. It takes only invocations it can parse exactly as oclif would
 * (src/lib/cli/parse-argv.ts); anything else (help, a bad flag, another
 * command) returns false and bin/actors hands the argv to the oclif CLI, so
 * help and every parse error still come from oclif.
 */
import {followUpEndedRuns} from './lib/runs/after-run.js'
import {HOT_COMMANDS} from './lib/cli/hot-commands.js'
import {parseInvocation} from './lib/cli/parse-argv.js'
import {guardStdout} from './lib/present/output-guard.js'
import {present} from './lib/present/present.js'
import {reportError} from './lib/present/report-error.js'

/** The commands served here; the build writes them to dist/hot-commands.json, which bin/actors reads to pick this bundle. */
export const hotCommandNames: readonly string[] = Object.keys(HOT_COMMANDS)

/** Serve `argv` (without node and script) if it is a clean hot-command invocation; false otherwise. */
export async function run(argv: string[]): Promise<boolean> {
  if (process.env.ACTORS_FAST === '0') return false
  const definition = Object.hasOwn(HOT_COMMANDS, argv[0] ?? '') ? HOT_COMMANDS[argv[0]] : undefined
  const invocation = definition && parseInvocation(definition, argv.slice(1))
  if (!definition || !invocation) return false
  // A reader that closes the pipe early (`| head`) or a full disk is not a bug. Lazy: nothing has made stdout yet.
  guardStdout({lazy: true})
  try {
    // The definition returns its result; the one output step decides the mode and shows it.
    await present(await definition.run(invocation), invocation.json)
  } catch (error) {
    reportError(error as Error, invocation.json, definition.id)
  } finally {
    // Runs the command's reads settled: their follow-ups (queued siblings start), outside every lock.
    followUpEndedRuns()
  }
  return true
}
