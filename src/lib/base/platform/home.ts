/**
 * The state root and the mapping from a user's Run reference (an id or a
 * state dir path) to a directory that is guaranteed to sit inside it.
 */
import {basename, dirname, join, resolve, sep} from 'node:path'
import {accessSync, constants, existsSync, realpathSync, statSync} from 'node:fs'
import {makePrivateDir, refuseLinkedDir} from './private-files.js'
import {isDirectory} from './state-files.js'
import {ActorsError, EXIT, readOnlyRootError, usageError} from './errors.js'
import {nodeOs} from './builtins.js'

const RUN_ID_PATTERN = /^[A-Za-z0-9_.-]+$/

/** Resolve the state root: `--home`, then `$ACTORS_HOME`, then XDG state dir. */
export function resolveHome(flag?: string): string {
  // `--home ""` (an unset shell variable, `--home "$DIR"`) must not quietly mean the default root.
  if (flag === '')
    throw usageError(
      '--home is empty',
      'give the state root directory (--home DIR), or leave --home out for the default',
    )
  const chosen = flag || process.env.ACTORS_HOME
  if (chosen) return resolve(chosen)
  const xdg = process.env.XDG_STATE_HOME
  // os.homedir() answers $HOME first when it is set; reading it here spares most commands loading node:os.
  return xdg ? join(resolve(xdg), 'actors') : join(process.env.HOME || nodeOs().homedir(), '.local', 'state', 'actors')
}

/** The name of the state root's directory of state dirs. */
export const RUNS_DIR_NAME = 'runs'

export function runsDir(home: string): string {
  // Asked for once per Run a command reads (a wait reads hundreds): joined once per state root.
  if (runsMemo?.home !== home) runsMemo = {home, dir: join(home, RUNS_DIR_NAME)}
  return runsMemo.dir
}

let runsMemo: {home: string; dir: string} | undefined

/**
 * Refuse a link in runs/'s place (exit 1, naming it and the fix), as a
 * launch's ensureHome does: any Run can put one there, and a listing, a read
 * or a prune through it would act on a dir outside the state root.
 */
export function refuseLinkedRuns(home: string): void {
  refuseLinkedDir(runsDir(home))
}
let indexMemo: {home: string; dir: string} | undefined

/**
 * Caches derived from the whole history (the listing cache, the launch log):
 * under runs/ because they grow with it, in a dot-dir so listings skip it and
 * writing them never changes runs/ itself (the run index watches that).
 */
export function historyCacheDir(home: string): string {
  return join(home, RUNS_DIR_NAME, '.cache')
}

/** The run index of live and unreported Runs (history/live-index.ts). */
export function indexDir(home: string): string {
  if (indexMemo?.home !== home) indexMemo = {home, dir: join(home, 'index')}
  return indexMemo.dir
}

/** Create the state root's directories on first use; refuse a root another user could write (see refuseForeignDir). */
export function ensureHome(home: string): void {
  for (const [dir, what] of [
    [runsDir(home), "the state root's runs directory"],
    [indexDir(home), "the state root's run index"],
  ]) {
    try {
      // Private (0700) whatever the umask, the root itself included when this makes it.
      makePrivateDir(dir)
    } catch (error) {
      throw stateDirError(home, dir, what, error)
    }
  }
  refuseForeignDir(home)
  refuseForeignDir(runsDir(home))
  // A read-only root says so here, naming the root, rather than at whichever write comes first.
  try {
    accessSync(runsDir(home), constants.W_OK)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EROFS') throw readOnlyRootError(home)
  }
}

/** Why `dir` of the state root `home` could not be made, naming it (and the root when its file system is read-only). */
function stateDirError(home: string, dir: string, what: string, error: unknown): Error {
  if (!(error instanceof Error) || error instanceof ActorsError) return error as Error
  const code = (error as NodeJS.ErrnoException).code
  if (code === 'EROFS') return readOnlyRootError(home)
  // The root itself a file: a bad --home / ACTORS_HOME, a usage error (exit 2).
  if (code === 'ENOTDIR' && !isDirectory(home))
    return usageError(
      `the state root ${home} is not a directory, so ${dir} cannot be made`,
      'point --home / ACTORS_HOME at a directory (or a path that does not exist yet)',
    )
  // A file where a directory of the root belongs is damage: exit 1, named.
  if (code === 'EEXIST' || code === 'ENOTDIR')
    return new ActorsError(
      `cannot use ${dir} as ${what}: a file is in the way (${code})`,
      EXIT.failed,
      `move the file away (mv ${JSON.stringify(dir)} ${JSON.stringify(`${dir}.bad`)}), or point --home / ACTORS_HOME at another directory`,
    )
  return usageError(
    `cannot use ${dir} as ${what} (${code ?? error.message})`,
    'point --home / ACTORS_HOME at a writable directory',
  )
}

/**
 * The state root and its runs/ hold every Run's argv, env and logs, and the
 * kernel acts on what it finds there: a directory another user made, or one
 * any user may write, could hold Runs planted by someone else. Refused,
 * exit 1, naming the directory and the fix (SPEC: Authority over files and Runs).
 */
function refuseForeignDir(dir: string): void {
  const stat = statSync(dir)
  const uid = process.getuid?.()
  if (uid !== undefined && stat.uid !== uid)
    throw new ActorsError(
      `permission denied: ${dir} belongs to another user (uid ${stat.uid}, you are uid ${uid}); a state root is private to the user who made it`,
      EXIT.failed,
      'use a state root of your own (--home DIR or ACTORS_HOME=DIR), or run as the user who owns it',
    )
  if ((stat.mode & 0o002) !== 0)
    throw new ActorsError(
      `${dir} is writable by every user (mode ${(stat.mode & 0o7777).toString(8)}); a state root must be private`,
      EXIT.failed,
      `make it private (chmod 700 ${JSON.stringify(dir)}) if it holds nothing you did not put there, or use another state root (--home DIR)`,
    )
}

/**
 * Whether `name` is a plain name that can be a file name under the state root
 * (a Run id, an owner): letters, digits, `_ . -`, not `.` or `..`, at most 128
 * characters. Anything else could escape the directory it is joined to.
 */
export function isPlainName(name: string): boolean {
  // Not led by "-": every command would read such an id as a flag (a dir planted as `-rf` was listed, and hinted as
  // `actors inspect -rf`).
  return RUN_ID_PATTERN.test(name) && name !== '.' && name !== '..' && name.length <= 128 && name[0] !== '-'
}

/** Refuse ids that are not plain names (`..`, `/`, empty, overlong): they could escape the root. */
export function validateRunId(id: string, what = 'Run id'): string {
  const generation = /^(.+)@(\d+)$/.exec(id)
  if (generation && isPlainName(generation[1])) {
    // `RUN@N` is how inspect and logs name a generation (they resolve it before any id reaches here).
    throw usageError(
      `\`@N\` names a generation only in inspect and logs (${what} ${JSON.stringify(id)})`,
      `use the Run id ${generation[1]} (its current generation), or \`actors inspect ${id}\` / \`actors logs ${id}\``,
    )
  }
  if (!isPlainName(id)) {
    throw usageError(
      `${what} ${JSON.stringify(id.length > 80 ? id.slice(0, 80) + '…' : id)} is not valid`,
      'use letters, digits, "_", "." and "-" only, not first "-" (at most 128 characters), e.g. build-1',
    )
  }
  return id
}

/** The state dir of a Run id (the id is validated first). */
export function runDir(home: string, id: string): string {
  // A valid id is one plain name: joined as is (path.join's normalising costs more than the rest of a lookup).
  return runsDir(home) + sep + validateRunId(id)
}

/**
 * Accept a Run id or a path to its state dir. A path must resolve to a
 * direct child of `$ACTORS_HOME/runs`; anything else is refused (exit 2).
 * Returns the Run id.
 */
export function resolveRunRef(home: string, ref: string): string {
  if (!ref.includes('/')) return validateRunId(ref)
  const wanted = resolve(ref)
  const root = runsDir(home)
  const realRoot = existsSync(root) ? realpathSync(root) : root
  const realWanted = existsSync(wanted) ? realpathSync(wanted) : wanted
  if (dirname(realWanted) !== realRoot && dirname(wanted) !== root) {
    throw usageError(
      `${ref} is not a Run state dir under ${root}`,
      'pass a Run id, or a directory of $ACTORS_HOME/runs (set --home if the Run lives elsewhere)',
    )
  }
  return validateRunId(basename(wanted))
}

/** A state dir as one key whatever spelling of the state root reached it (a linked home, a relative ACTORS_HOME). */
export function stateDirKey(dir: string): string {
  try {
    return realpathSync(dir)
  } catch {
    return resolve(dir)
  }
}

/** Whether two spellings name the same state dir: equal once resolved, or the same real directory (a linked home). */
export function sameStateDir(a: string, b: string): boolean {
  return resolve(a) === resolve(b) || stateDirKey(a) === stateDirKey(b)
}
