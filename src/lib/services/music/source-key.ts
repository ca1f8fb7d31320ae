/**
 * What a checkpoint's SOURCE means, independent of how it was spelled:
 * every entry resolved against its cwd (`~` expanded) and then to its real
 * path when it exists, URLs as given. `/music/a`, `/music/a/`, `a` run from
 * `/music` and a symlink to it are one source, so a restarted service
 * resumes instead of starting over.
 */
import {realpathSync} from 'node:fs'
import {isAbsolute, resolve} from 'node:path'
import {fileURLToPath} from 'node:url'
import {expandHome, isUrl, splitSources} from './queue.js'

function resolveEntry(entry: string, cwd: string): string {
  if (isUrl(entry)) return entry
  let path = expandHome(entry)
  if (path.toLowerCase().startsWith('file://')) {
    try {
      path = fileURLToPath(path)
    } catch {
      return entry
    }
  }
  path = isAbsolute(path) ? resolve(path) : resolve(cwd, path)
  try {
    return realpathSync(path)
  } catch {
    return path
  }
}

/** The resolved real paths (and URLs) that `sources`, given in `cwd`, name. */
export function sourceKey(sources: readonly string[], cwd: string): string[] {
  return splitSources(sources, cwd).map((entry) => resolveEntry(entry, cwd))
}

/** Whether two SOURCE lists, each with the cwd it was given in, name the same things. */
export function sameSource(a: readonly string[], aCwd: string, b: readonly string[], bCwd: string): boolean {
  const ka = sourceKey(a, aCwd)
  const kb = sourceKey(b, bCwd)
  return ka.length === kb.length && ka.every((entry, i) => entry === kb[i])
}

/** A track's real path (URLs and vanished files as given): one file reached through two spellings is one track. */
export function trackKey(track: string): string {
  if (isUrl(track)) return track
  try {
    return realpathSync(track)
  } catch {
    return track
  }
}

/**
 * Where `track` is in `queue`: by its spelling first, else by real path (the
 * source was spelled differently this time, through a symlink say); -1 when absent.
 */
export function findTrack(queue: readonly string[], track: string): number {
  const exact = queue.indexOf(track)
  if (exact >= 0) return exact
  const key = trackKey(track)
  return queue.findIndex((entry) => trackKey(entry) === key)
}

/** Whether two queues hold the same tracks, in any order and any spelling. */
export function sameTracks(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false
  const sorted = (list: readonly string[]) => list.map(trackKey).sort()
  const sa = sorted(a)
  const sb = sorted(b)
  return sa.every((v, i) => v === sb[i])
}
