/**
 * One error hierarchy for the whole CLI. Every user-facing failure is an
 * ActorsError carrying the documented exit code and, where one exists, a fix.
 * Commands never print stack traces for these; only unexpected bugs do.
 */
export const EXIT = {
  ok: 0,
  failed: 1,
  usage: 2,
  notActive: 3,
  notFound: 4,
  refused: 5,
  noInput: 66,
  notInstalled: 127,
  timeout: 124,
} as const

export class ActorsError extends Error {
  readonly exitCode: number
  readonly fix?: string
  /** Machine-readable extras printed under `--json` (e.g. the declared actions). */
  readonly details?: Record<string, unknown>

  constructor(message: string, exitCode: number, fix?: string, details?: Record<string, unknown>) {
    super(message)
    this.name = 'ActorsError'
    this.exitCode = exitCode
    this.fix = fix
    this.details = details
  }
}

/**
 * A problem with one piece of input (a Recipe's arg declaration or value, a
 * playback request's action or value), with the fix to show. Thrown where the
 * context is not known yet; the caller that knows it (the file, the command)
 * turns it into an ActorsError.
 */
export class InputProblem extends Error {
  constructor(
    message: string,
    readonly fix: string,
  ) {
    super(message)
  }
}

/** Bad flags, arguments, Recipe fields or values: exit 2. */
export function usageError(message: string, fix?: string, details?: Record<string, unknown>): ActorsError {
  return new ActorsError(message, EXIT.usage, fix, details)
}

/** The Run exists but cannot be acted on (finished, stale generation, endpoint not ready): exit 3. */
export function notActiveError(message: string, fix?: string, details?: Record<string, unknown>): ActorsError {
  return new ActorsError(message, EXIT.notActive, fix, details)
}

/** No such Run: exit 4. */
export function notFoundError(message: string, fix?: string): ActorsError {
  return new ActorsError(message, EXIT.notFound, fix ?? 'list Runs with `actors inspect`')
}

/** A limit refused the request (depth, budget, backpressure, singleton conflict): exit 5. */
export function refusedError(message: string, fix?: string, details?: Record<string, unknown>): ActorsError {
  return new ActorsError(message, EXIT.refused, fix, details)
}

/** A state file that is corrupt, oversized or of a foreign schema: fail closed, name the file. */
export function corruptStateError(file: string, problem: string): ActorsError {
  return new ActorsError(
    `${file}: ${problem}`,
    EXIT.failed,
    'inspect or remove the file by hand; actors never guesses at damaged state',
  )
}

/**
 * A path of the state root this user may not read or write (EACCES/EPERM):
 * the root is private to its owner, so this is another user's root, not a bug.
 */
export function permissionDeniedError(path: string): ActorsError {
  return new ActorsError(
    `permission denied: ${path}`,
    EXIT.failed,
    'the state root is private to the user who made it: run as that user, or use a state root of your own (--home DIR or ACTORS_HOME=DIR)',
  )
}

/** The state root's file system is read-only (EROFS): nothing can be launched, locked or recorded there. */
export function readOnlyRootError(path: string): ActorsError {
  return new ActorsError(
    `the state root's file system is read-only: cannot write ${path}`,
    EXIT.failed,
    'remount it read-write, or use a writable state root (--home DIR or ACTORS_HOME=DIR); reading (inspect, logs) still works',
  )
}

export function isActorsError(error: unknown): error is ActorsError {
  return error instanceof ActorsError
}
