/**
 * Playlist files: `.m3u`/`.m3u8` (one entry a line, `#` lines are comments or
 * extended info) and `.pls` (`FileN=` keys in N order). Entries come back as
 * written; resolving them against the playlist's folder is the queue's job.
 */
import {readFileSync, statSync} from 'node:fs'
import {extname} from 'node:path'
import {ActorsError, EXIT} from '../../base/platform/errors.js'
import {PLAYLIST_EXTENSIONS} from './types.js'

/** A playlist larger than this is not a playlist. */
const MAX_PLAYLIST_BYTES = 8 * 1024 * 1024

/** Whether `file` names a playlist by its extension. */
export function isPlaylistFile(file: string): boolean {
  return (PLAYLIST_EXTENSIONS as readonly string[]).includes(extname(file).toLowerCase())
}

/** The raw entries of an m3u/m3u8 playlist text, in order, comments and blanks skipped. */
export function parseM3u(text: string): string[] {
  return text
    .replace(/^\uFEFF/, '')
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'))
}

/** The raw entries of a pls playlist text, ordered by their `FileN` number. */
export function parsePls(text: string): string[] {
  const files: Array<{n: number; entry: string}> = []
  for (const raw of text.replace(/^\uFEFF/, '').split(/\r?\n/)) {
    const m = /^\s*File(\d+)\s*=\s*(.*?)\s*$/i.exec(raw)
    if (m && m[2] !== '') files.push({n: Number(m[1]), entry: m[2]})
  }
  return files.sort((a, b) => a.n - b.n).map((f) => f.entry)
}

/** Read a playlist file and return its raw entries; an unreadable file is a no-input error naming it. */
export function readPlaylist(file: string): string[] {
  let text: string
  try {
    const size = statSync(file).size
    if (size > MAX_PLAYLIST_BYTES) {
      throw new ActorsError(
        `${file}: playlist is ${size} bytes, over the ${MAX_PLAYLIST_BYTES}-byte limit`,
        EXIT.noInput,
        'split it into smaller playlists',
      )
    }
    text = readFileSync(file, 'utf8')
  } catch (error) {
    if (error instanceof ActorsError) throw error
    throw new ActorsError(
      `${file}: cannot read playlist (${(error as Error).message})`,
      EXIT.noInput,
      'check the path and its permissions',
    )
  }
  return extname(file).toLowerCase() === '.pls' ? parsePls(text) : parseM3u(text)
}
