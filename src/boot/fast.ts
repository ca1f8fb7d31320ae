/**
 * The fast front end: one small bundle per hot command (run, inspect,
 * control, wait, emit, logs), dist/fast-<command>.cjs, which bin/actors loads
 * first for that command. Each serves its command without loading oclif,
 * whose start-up alone costs about 25 ms, more than the whole launch budget,
 * and without the code of the other hot commands (a bundle carries only what
 * its command imports: `inspect` never compiles the launcher, `run -- CMD`
 * never the listing). scripts/build.mjs makes each bundle's entry from
 * fastFront() and the command's definition in src/lib/surface/cli/<command>.ts.
 *
 * A front takes only invocations it can parse exactly as oclif would
 * (src/lib/surface/cli/parse-argv.ts); anything else (help, a bad flag) returns false
 * and bin/actors hands the argv to the oclif CLI, so help and every parse
 * error still come from oclif.
 */
import {installExecutors} from '../lib/kernel/executors/index.js'
import {followUpEndedRuns} from '../lib/services/tree/after-run.js'
import type {AnyCommandDefinition} from '../lib/surface/cli/definition.js'
import {parseInvocation} from '../lib/surface/cli/parse-argv.js'
import {exitIfFlushed, guardStdout} from '../lib/surface/present/output-guard.js'
import {present} from '../lib/surface/present/present.js'
import {reportError} from '../lib/surface/present/report-error.js'

/** What dist/fast-<command>.cjs exports: the command it serves and the front that serves it. */
export interface FastFront {
  command: string
  /** Serve `argv` (without node and script) if it is a clean invocation of this command; false otherwise. */
  run(argv: string[]): Promise<boolean>
}

/** The fast front end of one hot command. */
export function fastFront(definition: AnyCommandDefinition): FastFront {
  return {command: definition.id, run: (argv) => serve(definition, argv)}
}

async function serve(definition: AnyCommandDefinition, argv: string[]): Promise<boolean> {
  if (process.env.ACTORS_FAST === '0' || argv[0] !== definition.id) return false
  const invocation = parseInvocation(definition, argv.slice(1))
  if (!invocation) return false
  // A reader that closes the pipe early (`| head`) or a full disk is not a bug. Lazy: nothing has made stdout yet.
  guardStdout({lazy: true})
  installExecutors()
  try {
    // The definition returns its result; the one output step decides the mode and shows it.
    await present(await definition.run(invocation), invocation.json)
  } catch (error) {
    reportError(error as Error, invocation.json, definition.id)
  } finally {
    // Runs the command's reads settled: their follow-ups (queued siblings start), outside every lock.
    followUpEndedRuns()
  }
  // The command is over and its output handed to the OS: no need to wait for Node's teardown.
  exitIfFlushed()
  return true
}
