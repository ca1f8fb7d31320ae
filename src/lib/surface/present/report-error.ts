/**
 * Failures as the user sees them (both front ends): a message and fix on
 * stderr, the error document under --json, the exit code.
 */
import {EXIT, isActorsError, permissionDeniedError, readOnlyRootError} from '../../base/platform/errors.js'
import {isOutputError, stdoutFailure} from './output-guard.js'
import {printJson} from './write.js'
import {inertText} from '../../base/platform/text.js'
import {closest} from '../../base/platform/did-you-mean.js'

const inert = (text: string) => inertText(text, {multiline: true})

/**
 * The single place where a failure becomes a message and an exit code.
 * ActorsErrors are user-facing (message, fix, documented exit code, no stack
 * trace); oclif's parse errors are usage errors (exit 2); anything else is a bug.
 */
export function reportError(
  error: Error & {code?: string; syscall?: string; path?: string; dest?: string; oclif?: {exit?: number}},
  json: boolean,
  commandId: string | undefined,
): void {
  // A path this user may not touch (another user's private state root) is named with a fix, not reported as a bug.
  // symlink(), link() and rename() name the path they make as `dest` (`path` is a lock's identity text, or the source).
  const denied = error.dest ?? error.path
  if ((error.code === 'EACCES' || error.code === 'EPERM') && typeof denied === 'string')
    error = permissionDeniedError(denied)
  if (error.code === 'EROFS' && typeof denied === 'string') error = readOnlyRootError(denied)
  if (isActorsError(error)) {
    process.exitCode = error.exitCode
    // Messages echo names, values and YAML fields as given: inert on the terminal, exact under --json.
    process.stderr.write(inert(`actors: ${error.message}\n${error.fix ? `  fix: ${error.fix}\n` : ''}`))
    if (json)
      printJson({error: {message: error.message, exit_code: error.exitCode, fix: error.fix ?? null, ...error.details}})
    return
  }
  const oclifExit = error.oclif?.exit
  if (oclifExit !== undefined || error.name === 'CLIError' || /Parse|Flag|Arg/.test(error.constructor?.name ?? '')) {
    const code = oclifExit === 0 ? 0 : EXIT.usage
    process.exitCode = code
    if (code !== 0) {
      const id = commandId?.replaceAll(':', ' ') ?? ''
      // oclif ends its message with a hint of its own; ours is the fix line (one hint, not two).
      const message = error.message.replace(/\s*See more help with --help\s*$/, '').trim()
      const fix = `${flagSuggestion(error as ParseErrorShape)}see \`actors ${id} --help\``
      process.stderr.write(inert(`actors: ${message}\n  fix: ${fix}\n`))
      if (json) printJson({error: {message, exit_code: code, fix}})
    }
    return
  }
  if (error.code === 'EEXIT') return
  // stdout went away (the output guard already said so, or a closed pipe needs no words) or a file system is full.
  if (error === stdoutFailure() || error.code === 'EPIPE' || error.code === 'ERR_STREAM_DESTROYED') return
  if (error.code === 'ENOSPC' || error.code === 'EDQUOT' || (isOutputError(error) && error.syscall === 'write')) {
    process.exitCode = EXIT.failed
    process.stderr.write(
      `actors: ${error.code === 'EDQUOT' ? 'disk quota exceeded' : error.code === 'ENOSPC' ? 'no space left on the device' : error.message}\n  fix: free space in the state root ($ACTORS_HOME) and where the output goes, then retry\n`,
    )
    return
  }
  process.exitCode = EXIT.failed
  process.stderr.write(inert(`actors: internal error: ${error.message}\n`))
  if (process.env.ACTORS_DEBUG) process.stderr.write(inert(`${error.stack}\n`))
  else process.stderr.write('  (set ACTORS_DEBUG=1 for the stack trace, and please report it)\n')
  if (json) printJson({error: {message: error.message, exit_code: EXIT.failed}})
}

/** What an oclif parse error carries: the flags it did not know, and the command's own flags. */
interface ParseErrorShape {
  flags?: unknown
  parse?: {input?: {flags?: Record<string, unknown>}}
}

/** oclif's unknown-flag error: `did you mean "--status"? ` for the nearest flag of the command, or nothing. */
function flagSuggestion(error: ParseErrorShape): string {
  const known = Object.keys(error.parse?.input?.flags ?? {})
  const typed = Array.isArray(error.flags) ? error.flags : []
  for (const flag of typed) {
    const match = typeof flag === 'string' ? closest(flag.replace(/^-+/, '').split('=')[0], known) : undefined
    if (match) return `did you mean "--${match}"? `
  }
  return ''
}
