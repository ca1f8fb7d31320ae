/**
 * Turning SOURCE arguments into a play queue: files, directories (recursive,
 * audio extensions, natural order), URLs, m3u/m3u8/pls playlists whose
 * relative entries resolve against the playlist's folder, `|`-separated
 * lists and `~`. Missing entries become warnings; an empty queue is exit 66.
 */
import {nodeCrypto} from '../../base/platform/builtins.js'
import {existsSync, readdirSync, realpathSync, statSync} from 'node:fs'
import {homedir} from 'node:os'
import {dirname, extname, isAbsolute, join, resolve} from 'node:path'
import {fileURLToPath} from 'node:url'
import {ActorsError, EXIT} from '../../base/platform/errors.js'
import {notAudioReason} from './audio-sniff.js'
import {isPlaylistFile, readPlaylist} from './playlists.js'
import {AUDIO_EXTENSIONS, type Track} from './types.js'

export interface QueueResult {
  tracks: Track[]
  /** Human messages about skipped entries, one per problem. */
  warnings: string[]
}

export interface BuildQueueOptions {
  /** Where relative SOURCE paths resolve (default: process.cwd()). */
  cwd?: string
  shuffle?: boolean
}

const URL_PATTERN = /^[a-z][a-z0-9+.-]*:\/\//i
/** Nested playlists deeper than this are a loop or a mistake. */
const MAX_PLAYLIST_DEPTH = 8
/** Guard against walking a whole disk by accident. */
const MAX_TRACKS = 100_000

// A fixed locale, so the order never depends on the machine's LANG; code units break ties. Made on first use:
// a collator loads ICU's collation data (about 4 ms), which the commands that bundle this module but sort no
// tracks (control, mcp) must not pay at start-up.
let collator: Intl.Collator | undefined

/** Compare names the way people number files: `2 song` before `10 song`. */
export function naturalCompare(a: string, b: string): number {
  collator ??= new Intl.Collator('en', {numeric: true, sensitivity: 'base'})
  return collator.compare(a, b) || (a < b ? -1 : a > b ? 1 : 0)
}

/** Expand a leading `~` or `~/` to the home directory. */
export function expandHome(path: string): string {
  if (path === '~') return homedir()
  if (path.startsWith('~/')) return join(homedir(), path.slice(2))
  return path
}

/** Whether an entry is a URL the player streams itself (file:// URLs are turned into paths first). */
export function isUrl(entry: string): boolean {
  return URL_PATTERN.test(entry) && !entry.toLowerCase().startsWith('file://')
}

/** A new array in random order (Fisher-Yates with a cryptographic source). */
export function shuffleTracks<T>(items: readonly T[]): T[] {
  const out = [...items]
  for (let i = out.length - 1; i > 0; i--) {
    const j = nodeCrypto().randomInt(i + 1)
    ;[out[i], out[j]] = [out[j], out[i]]
  }
  return out
}

/**
 * Split SOURCE arguments into entries: an argument that exists as a path is
 * taken whole (a file name may contain `|`), otherwise it is a `|` list.
 */
export function splitSources(sources: readonly string[], cwd: string): string[] {
  const entries: string[] = []
  for (const source of sources) {
    if (!source.includes('|') || existsSync(resolve(cwd, expandHome(source)))) entries.push(source)
    else
      entries.push(
        ...source
          .split('|')
          .map((s) => s.trim())
          .filter(Boolean),
      )
  }
  return entries
}

/** Build the queue for SOURCE arguments; throws exit 66 when nothing is playable. */
export function buildQueue(sources: readonly string[], options: BuildQueueOptions = {}): QueueResult {
  const cwd = options.cwd ?? process.cwd()
  const result: QueueResult = {tracks: [], warnings: []}
  const entries = splitSources(sources, cwd)
  for (const entry of entries) addEntry(entry, cwd, result, 0, new Set())
  if (result.tracks.length === 0) {
    const shown = sources.length === 0 ? '(none given)' : sources.join(' ')
    throw new ActorsError(
      `nothing playable in ${shown}${result.warnings.length ? ` (${result.warnings.join('; ')})` : ''}`,
      EXIT.noInput,
      `give audio files (${AUDIO_EXTENSIONS.join(' ')}), directories holding them, URLs or m3u/pls playlists`,
    )
  }
  if (result.tracks.length >= MAX_TRACKS)
    result.warnings.push(`the queue stops at ${MAX_TRACKS} tracks; the rest were not added`)
  if (options.shuffle) result.tracks = shuffleTracks(result.tracks)
  return result
}

function addEntry(
  raw: string,
  base: string,
  result: QueueResult,
  depth: number,
  seenPlaylists: Set<string>,
  from?: string,
): void {
  if (result.tracks.length >= MAX_TRACKS) return
  const where = from ? ` (in ${from})` : ''
  if (isUrl(raw)) {
    result.tracks.push(raw)
    return
  }
  let path: string
  try {
    path = raw.toLowerCase().startsWith('file://') ? fileURLToPath(raw) : expandHome(raw)
  } catch {
    result.warnings.push(`${raw}${where}: not a valid file URL, skipped`)
    return
  }
  path = isAbsolute(path) ? path : resolve(base, path)
  let stat
  try {
    stat = statSync(path)
  } catch {
    result.warnings.push(`${path}${where}: not found, skipped`)
    return
  }
  if (stat.isDirectory()) {
    const before = result.tracks.length
    for (const file of walkAudio(path)) {
      if (result.tracks.length >= MAX_TRACKS) break
      result.tracks.push(file)
    }
    if (result.tracks.length === before)
      result.warnings.push(`${path}${where}: no audio files (${AUDIO_EXTENSIONS.join(' ')}), skipped`)
    return
  }
  if (isPlaylistFile(path)) {
    if (depth >= MAX_PLAYLIST_DEPTH || seenPlaylists.has(path)) {
      result.warnings.push(`${path}${where}: playlist includes itself or nests too deep, skipped`)
      return
    }
    let items: string[]
    try {
      items = readPlaylist(path)
    } catch (error) {
      result.warnings.push(`${(error as Error).message}, skipped`)
      return
    }
    const seen = new Set(seenPlaylists).add(path)
    for (const item of items) addEntry(item, dirname(path), result, depth + 1, seen, path)
    return
  }
  // A FIFO, device or socket would block the player forever (or play /dev/zero); streams go by URL.
  if (!stat.isFile()) {
    result.warnings.push(`${path}${where}: not a regular file, skipped`)
    return
  }
  const notAudio = notAudioReason(path)
  if (notAudio) {
    result.warnings.push(`${path}${where}: not audio (${notAudio}), skipped`)
    return
  }
  result.tracks.push(path)
}

/** Every audio file below `dir`, in natural order of the path relative to `dir`. */
function walkAudio(dir: string): string[] {
  const found: string[] = []
  // Each real directory once: symlinks back up the tree would otherwise multiply the walk (2 loops: 2^32 visits).
  const visited = new Set<string>()
  const visit = (current: string, relative: string, depth: number) => {
    if (depth > 32) return
    try {
      const real = realpathSync(current)
      if (visited.has(real)) return
      visited.add(real)
    } catch {
      return
    }
    let names: string[]
    try {
      names = readdirSync(current)
    } catch {
      return
    }
    for (const name of names) {
      if (name.startsWith('.')) continue
      const full = join(current, name)
      const rel = relative ? `${relative}/${name}` : name
      let stat
      try {
        stat = statSync(full)
      } catch {
        continue
      }
      if (stat.isDirectory()) visit(full, rel, depth + 1)
      else if (stat.isFile() && (AUDIO_EXTENSIONS as readonly string[]).includes(extname(name).toLowerCase()))
        found.push(rel)
    }
  }
  visit(dir, '', 0)
  return found.sort(naturalCompare).map((rel) => join(dir, rel))
}
