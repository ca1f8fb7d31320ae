/**
 * Refusing what is plainly not audio before a player is asked to play it
 * (ffplay "plays" a README and exits 0): an empty file, a text file, or a
 * well-known non-audio format, told by its first bytes. Anything else is
 * left to the player, which decides (video containers carry audio too).
 */
import {closeSync, openSync, readSync} from 'node:fs'

const SNIFF_BYTES = 512

/** Well-known formats that never hold sound, by their leading bytes. */
const NOT_AUDIO: Array<[string, number[]]> = [
  ['a PNG image', [0x89, 0x50, 0x4e, 0x47]],
  ['a JPEG image', [0xff, 0xd8, 0xff]],
  ['a GIF image', [0x47, 0x49, 0x46, 0x38]],
  ['a PDF document', [0x25, 0x50, 0x44, 0x46]],
  ['a zip archive', [0x50, 0x4b, 0x03, 0x04]],
  ['a gzip archive', [0x1f, 0x8b]],
  ['an xz archive', [0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00]],
  ['a 7z archive', [0x37, 0x7a, 0xbc, 0xaf, 0x27, 0x1c]],
  ['an ELF executable', [0x7f, 0x45, 0x4c, 0x46]],
  ['an SQLite database', [0x53, 0x51, 0x4c, 0x69, 0x74, 0x65]],
]

function startsWith(bytes: Buffer, magic: number[]): boolean {
  return bytes.length >= magic.length && magic.every((b, i) => bytes[i] === b)
}

/** Text: no NUL and valid UTF-8 (every audio container has binary bytes in its first 512). */
function isText(bytes: Buffer): boolean {
  if (bytes.includes(0)) return false
  try {
    new TextDecoder('utf-8', {fatal: true}).decode(bytes.length === SNIFF_BYTES ? trimPartialChar(bytes) : bytes)
    return true
  } catch {
    return false
  }
}

/** Drop a UTF-8 sequence cut off by the sniff window, so a long text file is not called binary. */
function trimPartialChar(bytes: Buffer): Buffer {
  let end = bytes.length
  for (let back = 1; back <= 3 && end - back >= 0; back++) {
    const b = bytes[end - back]
    if ((b & 0xc0) === 0x80) continue
    if (b >= 0xc0) end -= back
    break
  }
  return bytes.subarray(0, end)
}

/** What `file` is when it is plainly not audio ("a text file", "a PNG image", "an empty file"); undefined otherwise. */
export function notAudioReason(file: string): string | undefined {
  let bytes: Buffer
  let fd: number | undefined
  try {
    fd = openSync(file, 'r')
    const buffer = Buffer.alloc(SNIFF_BYTES)
    bytes = buffer.subarray(0, readSync(fd, buffer, 0, SNIFF_BYTES, 0))
  } catch {
    return undefined // unreadable: the player reports it
  } finally {
    if (fd !== undefined) closeSync(fd)
  }
  if (bytes.length === 0) return 'an empty file'
  for (const [what, magic] of NOT_AUDIO) if (startsWith(bytes, magic)) return what
  if (isText(bytes)) return 'a text file'
  return undefined
}
