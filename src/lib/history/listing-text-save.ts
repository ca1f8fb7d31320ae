/**
 * Writing the listing text cache (listing-text-cache.ts) anew after a
 * listing: the entries it printed that may be kept, cached texts copied from
 * the old file, the body checked as a read checks it before it is written.
 */
import {unlinkSync} from 'node:fs'
import {dirname} from 'node:path'
import {makePrivateDir} from '../platform/private-files.js'
import {writeFileAtomic} from '../platform/state-files.js'
import {
  COMMA,
  ENDIAN,
  FIELD_BYTES,
  K,
  KEY_BYTES,
  NEWLINE,
  NUL,
  namesOf,
  readFully,
  SCHEMA,
  type Cache,
} from './listing-text-file.js'
import type {Joined} from './listing-text-join.js'
import type {Printed} from './listing-text-print.js'

/**
 * Write the cache anew: the Run dirs `list` names, and the `printed`
 * entries it may keep, in listing order, with the keys their run.json files
 * had before they were read, cached texts copied from the old file. The body
 * is checked as a read checks it before it is written; on any failure the
 * old file is removed rather than left to be read again.
 */
export function saveCache(
  file: string,
  base: string,
  list: string,
  cache: Cache | undefined,
  joined: Joined,
  printed: Printed[],
): void {
  try {
    makePrivateDir(dirname(file))
    writeFileAtomic(file, buildCache(base, list, cache, joined, printed), {durable: false})
  } catch {
    try {
      unlinkSync(file)
    } catch {}
  }
}

/** The bytes of the new cache file (see saveCache); throws when a text or the old file is damaged. */
function buildCache(base: string, list: string, cache: Cache | undefined, joined: Joined, printed: Printed[]): Buffer {
  const entries = printed.filter((e) => typeof e === 'number' || e.cacheable)
  const count = entries.length
  const listBytes = Buffer.from(list)
  const index = Buffer.alloc(count * (KEY_BYTES + FIELD_BYTES))
  const keys = new Float64Array(index.buffer, index.byteOffset, count * K)
  const fields = new Uint32Array(index.buffer, index.byteOffset + count * KEY_BYTES, count * 5)
  const oldNames = cache && printed.some((e) => typeof e === 'number') ? namesOf(cache)?.toString('latin1') : undefined
  // Names as one string (ASCII: a byte per character), encoded once: thousands of small buffers cost a cold listing.
  const names: string[] = []
  // The body's pieces, in order: a fresh text, or old entries' texts with their separators (offsets [from, to) of the old file).
  const pieces: Array<Buffer | [number, number]> = []
  const oldTextAt = new Float64Array(cache?.count ?? 0)
  for (let p = 0, at = cache?.bodyAt ?? 0; cache && p < cache.count; at += cache.fields[p * 5] + 2, p++)
    oldTextAt[p] = at
  let namesBytes = 0
  let body = 0
  entries.forEach((e, i) => {
    let name: string, idLength: number, length: number, dir: number
    if (typeof e === 'number') {
      const f = e * 5
      const old = cache!.fields
      if (oldNames === undefined) throw new Error('the old cache file has damaged names')
      ;[name, idLength, length, dir] = [
        oldNames.slice(old[f + 2], old[f + 2] + old[f + 3] + old[f + 4]),
        old[f + 3],
        old[f],
        joined.dirOf[e],
      ]
      keys.set(joined.keys.subarray(e * K, e * K + K), i * K)
      const last = pieces.at(-1)
      if (Array.isArray(last) && last[1] === oldTextAt[e]) last[1] += length + 2
      else pieces.push([oldTextAt[e], oldTextAt[e] + length + 2])
    } else {
      ;[name, idLength, length, dir] = [e.run + e.created, e.run.length, e.text.length, e.dir]
      keys.set(e.key, i * K)
      pieces.push(e.text)
    }
    const f = i * 5
    fields[f] = length
    fields[f + 1] = dir
    fields[f + 2] = namesBytes
    fields[f + 3] = idLength
    fields[f + 4] = name.length - idLength
    names.push(name)
    namesBytes += name.length
    body += length + 2
  })
  const head = Buffer.from(
    JSON.stringify({schema: SCHEMA, endian: ENDIAN, base, count, list: listBytes.length, names: namesBytes, body}) +
      '\n',
  )
  const out = Buffer.allocUnsafe(head.length + index.length + listBytes.length + namesBytes + body)
  out.set(head, 0)
  out.set(index, head.length)
  out.set(listBytes, head.length + index.length)
  let at = head.length + index.length + listBytes.length
  at += out.write(names.join(''), at, 'latin1')
  const bodyAt = at
  for (const piece of pieces) {
    if (!Array.isArray(piece)) {
      out.set(piece, at)
      at += piece.length
      out[at++] = NUL
      out[at++] = NEWLINE
    } else if (readFully(cache!.fd, out, at, piece[1] - piece[0], piece[0]) === piece[1] - piece[0]) {
      at += piece[1] - piece[0]
    } else {
      throw new Error('the old cache file changed while it was read')
    }
  }
  checkBody(out, bodyAt, fields, count)
  return out
}

/** Check the body as a read checks it: each separator where the lengths say (made a comma for the moment), and no other NUL. */
function checkBody(out: Buffer, bodyAt: number, fields: Uint32Array, count: number): void {
  const ends: number[] = []
  for (let i = 0, textAt = bodyAt; i < count; textAt += fields[i * 5] + 2, i++) ends.push(textAt + fields[i * 5])
  if (!ends.every((end) => out[end] === NUL && out[end + 1] === NEWLINE)) throw new Error('a damaged text')
  for (const end of ends) out[end] = COMMA
  const sound = out.indexOf(NUL, bodyAt) < 0
  for (const end of ends) out[end] = NUL
  if (!sound) throw new Error('a damaged text')
}
