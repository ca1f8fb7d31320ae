/**
 * The CLI entry (bundled to dist/cli.cjs, which bin/actors loads). Commands
 * are registered explicitly so oclif never scans directories at start-up;
 * every command module here is light: heavy views are imported dynamically on
 * the TTY path only.
 */
import {execute} from '@oclif/core'
import {jsonRequested} from '../lib/surface/cli/definition.js'
import {reportError} from '../lib/surface/present/report-error.js'
import {usageError} from '../lib/base/platform/errors.js'
import {installExecutors} from '../lib/kernel/executors/index.js'
import Adopt from '../commands/adopt.js'
import Autocomplete from '../commands/autocomplete/index.js'
import AutocompleteScript from '../commands/autocomplete/script.js'
import {serveCompletion} from '../lib/surface/cli/complete-serve.js'
import {didYouMean} from '../lib/base/platform/did-you-mean.js'
import {guardStdout} from '../lib/surface/present/output-guard.js'
import Close from '../commands/close.js'
import Control from '../commands/control.js'
import Emit from '../commands/emit.js'
import Inbox from '../commands/inbox.js'
import Inspect from '../commands/inspect.js'
import LockAcquire from '../commands/lock/acquire.js'
import LockExec from '../commands/lock/exec.js'
import LockRelease from '../commands/lock/release.js'
import LockRenew from '../commands/lock/renew.js'
import LockStatus from '../commands/lock/status.js'
import Logs from '../commands/logs.js'
import Mcp from '../commands/mcp.js'
import MusicPlay from '../commands/music/play.js'
import MusicServe from '../commands/music/serve.js'
import Prune from '../commands/prune.js'
import Recipes from '../commands/recipes/index.js'
import RecipesValidate from '../commands/recipes/validate.js'
import Rerun from '../commands/rerun.js'
import Run from '../commands/run.js'
import Send from '../commands/send.js'
import Version from '../commands/version.js'
import Wait from '../commands/wait.js'

export const COMMANDS = {
  adopt: Adopt,
  autocomplete: Autocomplete,
  'autocomplete:script': AutocompleteScript,
  close: Close,
  control: Control,
  emit: Emit,
  inbox: Inbox,
  inspect: Inspect,
  'lock:acquire': LockAcquire,
  'lock:exec': LockExec,
  'lock:release': LockRelease,
  'lock:renew': LockRenew,
  'lock:status': LockStatus,
  logs: Logs,
  mcp: Mcp,
  'music:play': MusicPlay,
  'music:serve': MusicServe,
  prune: Prune,
  recipes: Recipes,
  'recipes:validate': RecipesValidate,
  rerun: Rerun,
  run: Run,
  send: Send,
  version: Version,
  wait: Wait,
}

/** Run the CLI with `argv` (without node and script). */
export async function run(argv: string[]): Promise<void> {
  // A reader that closes the pipe early (`| head`) or a full disk is not a bug.
  guardStdout()
  installExecutors()
  // `actors help [COMMAND]`, as in pm2 and pueue: the same text as --help.
  if (argv[0] === 'help') argv = [...argv.slice(1), '--help']
  // The completion scripts' helper (src/lib/surface/cli/complete-serve.ts): hidden, never an error.
  if (argv[0] === '__complete') return serveCompletion(COMMANDS, argv.slice(1))
  const unknown = unknownCommand(argv)
  if (unknown) {
    // oclif's own message (" ›   Error: command x not found") would break the `actors: ... fix: ...` form every other error has.
    const error = usageError(
      `unknown command "${unknown}"`,
      `${didYouMean(unknown, commandNames())}one of ${commandNames().join(', ')}; see \`actors --help\``,
    )
    reportError(error, jsonRequested(argv), undefined)
    return
  }
  await execute({args: argv, dir: import.meta.url})
}

/** The command words ("music play") of every command. */
function commandNames(): string[] {
  return Object.keys(COMMANDS).map((id) => id.replaceAll(':', ' '))
}

/** The words of argv that name no command or topic, or undefined when they do (or argv starts with a flag). */
function unknownCommand(argv: string[]): string | undefined {
  const words: string[] = []
  for (const word of argv) {
    if (word.startsWith('-')) break
    const id = [...words, word].join(':')
    // A complete command takes arguments from here on (`recipes show-me` is the Recipe "show-me").
    if (Object.hasOwn(COMMANDS, words.join(':')) && words.length > 0) return undefined
    if (!Object.keys(COMMANDS).some((known) => known === id || known.startsWith(`${id}:`)))
      return [...words, word].join(' ')
    words.push(word)
  }
  return undefined
}
