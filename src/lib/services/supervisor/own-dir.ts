/**
 * Where a Run's state dir is when its supervisor writes the end. A Run can
 * rename dirs in the state root it writes: one that swapped its dir with a
 * sibling's had both supervisors find the other Run's run.json at their
 * path, and both exit statuses were lost (each left the other's dir alone,
 * as it must). The end goes to the dir whose run.json carries this
 * supervisor's instance, wherever in `runs/` it now is; never through a link.
 */
import {lstatSync, readdirSync} from 'node:fs'
import {dirname, join} from 'node:path'
import {readJsonFile} from '../../base/platform/state-files.js'
import {RUN_SCHEMA, type RunMeta} from '../../base/records/run.js'
import {runFile} from '../../kernel/runs/store.js'

/** `dir` while it still holds the Run of `instance`, else the plain dir beside it that does; undefined when none does. */
export function ownStateDir(dir: string, instance: string): string | undefined {
  if (ownMeta(dir, instance)) return dir
  let names: string[]
  try {
    names = readdirSync(dirname(dir))
  } catch {
    return undefined
  }
  for (const name of names) {
    const candidate = join(dirname(dir), name)
    if (candidate !== dir && ownMeta(candidate, instance)) return candidate
  }
  return undefined
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

function isPlainDir(path: string): boolean {
  try {
    return lstatSync(path).isDirectory()
  } catch {
    return false
  }
}

/**
 * Whether `dir` is a plain directory whose run.json cannot be read as a
 * Run's record at all: gone, made a FIFO, a directory or a link, oversized,
 * truncated, not JSON. A Run that did so to its own record had its exit
 * status lost, since its supervisor found no run.json of its own to write the
 * end beside. (A run.json of another Run is no damage: that dir is not this
 * Run's any more, own-dir's search found none of its own, and it is left alone.)
 */
export function isRunJsonDamaged(dir: string): boolean {
  if (!isPlainDir(dir)) return false
  const stat = lstatSync(runFile(dir, 'meta'), {throwIfNoEntry: false})
  if (!stat?.isFile()) return true
  try {
    readJsonFile<RunMeta>(runFile(dir, 'meta'), {schema: RUN_SCHEMA})
    return false
  } catch {
    return true
  }
}
