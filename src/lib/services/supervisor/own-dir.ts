/**
 * Where a Run's state dir is when its supervisor writes the end. A Run can
 * rename dirs in the state root it writes: one that swapped its dir with a
 * sibling's had both supervisors find the other Run's run.json at their
 * path, and both exit statuses were lost (each left the other's dir alone,
 * as it must). The end goes to the dir the supervisor started with (the
 * same inode), wherever in `runs/` it now is; never through a link. What
 * the Run wrote into its run.json does not decide which dir is its own: one
 * that rewrote its `run_instance_id` had its end lost (recorded later as a
 * lost supervisor's), so the supervisor's own copy is written there instead.
 */
import {lstatSync, readdirSync} from 'node:fs'
import {isPlainDir} from '../../base/platform/private-files.js'
import {dirname, join} from 'node:path'
import {readJsonFile} from '../../base/platform/state-files.js'
import {RUN_SCHEMA, type RunMeta} from '../../base/records/run.js'
import {runFile} from '../../kernel/runs/store.js'

/** Which directory a state dir is, whatever it is named: undefined when `dir` is no plain directory. */
export type DirIdentity = {dev: number; ino: number}

export function dirIdentityOf(dir: string): DirIdentity | undefined {
  const stat = lstatSync(dir, {throwIfNoEntry: false})
  return stat?.isDirectory() ? {dev: stat.dev, ino: stat.ino} : undefined
}

/**
 * The dir the supervisor started with (`identity`), at `dir` or renamed
 * beside it; undefined when it is in neither (moved out of `runs/`, or
 * removed: a run.json of this instance that the Run copied into a
 * neighbour's dir does not make that dir its own). Without an identity (no
 * plain dir at the start), `dir` while it holds the Run of `instance`, else
 * the plain dir beside it that does.
 */
export function ownStateDir(dir: string, instance: string, identity: DirIdentity | undefined): string | undefined {
  const siblings = [dir, ...namesBeside(dir)]
  if (identity) return siblings.find((candidate) => isSameDir(candidate, identity))
  return siblings.find((candidate) => ownMeta(candidate, instance) !== undefined)
}

function namesBeside(dir: string): string[] {
  try {
    return readdirSync(dirname(dir))
      .map((name) => join(dirname(dir), name))
      .filter((candidate) => candidate !== dir)
  } catch {
    return []
  }
}

/** Whether `path` is the plain directory `identity` names. */
export function isSameDir(path: string, identity: DirIdentity): boolean {
  const found = dirIdentityOf(path)
  return found?.dev === identity.dev && found.ino === identity.ino
}

/**
 * run.json in `dir` when `dir` is a plain directory (not a link) holding
 * the Run of `instance`, even while it bears another name (readers refuse
 * such a dir: it is swapped, and the end written here is right again once it
 * is swapped back); else undefined.
 */
export function ownMeta(dir: string, instance: string): RunMeta | undefined {
  if (!isPlainDir(dir)) return undefined
  try {
    const meta = readJsonFile<RunMeta>(runFile(dir, 'meta'), {schema: RUN_SCHEMA})
    return meta?.run_instance_id === instance ? meta : undefined
  } catch {
    return undefined
  }
}

/**
 * What is wrong with run.json in `dir`, this supervisor's own dir (the same
 * inode as it started with): unreadable as a Run's record (gone, made a
 * FIFO, a directory or a link, oversized, truncated, not JSON) or naming
 * another instance than `instance`, which the Run wrote there; undefined
 * when it is this Run's. A Run that did either to its own record had its
 * exit status lost, since its supervisor found no run.json of its own to
 * write the end beside.
 */
export function runJsonDamage(dir: string, instance: string): string | undefined {
  if (!isPlainDir(dir)) return undefined
  const file = runFile(dir, 'meta')
  if (!lstatSync(file, {throwIfNoEntry: false})?.isFile()) return `${file} could not be read`
  let named: unknown
  try {
    named = readJsonFile<RunMeta>(file, {schema: RUN_SCHEMA})?.run_instance_id
  } catch {
    return `${file} could not be read`
  }
  return named === instance ? undefined : `${file} names run_instance_id ${JSON.stringify(named)}, not this Run's`
}
