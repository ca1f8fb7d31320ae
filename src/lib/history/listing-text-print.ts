/**
 * Printing a joined listing of the listing text cache (listing-text-cache.ts):
 * the cached texts streamed from the file's body through one buffer, checked
 * on the way, with the Runs read fresh merged in, and what was printed noted
 * for the file written after it (listing-text-save.ts).
 */
import {COMMA, K, NEWLINE, NUL, readFully, SEPARATOR, type Cache, type ReadFresh} from './listing-text-file.js'
import {byListingOrder, readFreshText, type Fresh, type Joined} from './listing-text-join.js'

/** What the listing printed, in order: a cache entry (its number) or a fresh text; what a rewritten cache holds. */
export type Printed = number | Fresh

/**
 * Prints a joined listing: the body streamed through one buffer (the
 * window), every separator checked on the way, the hits' texts printed in
 * pieces (neighbours in the body together), the fresh texts between them.
 * A piece that follows printed text starts with its `,\n`, and a piece is
 * printed only once checked, so a damaged text found mid-listing leaves
 * nothing half printed: it and every hit after it are read fresh instead.
 */
export class Printer {
  /** Whether a cached text failed its check. */
  damaged = false
  readonly printed: Printed[] = []
  private buffer: Buffer
  /** The body bytes in the buffer: file offsets [from, to). */
  private from = 0
  private to = 0
  /**
   * The piece being gathered: the texts of entries first..last, at
   * buffer[start, end), the first text at `textStart` (before it, the `,\n`
   * that leads the piece, if any); none while first < 0.
   */
  private first = -1
  private last = -1
  private start = 0
  private end = 0
  private textStart = 0
  /** The piece needs a `,\n` of its own (it starts at the body's start, where no separator precedes it). */
  private separately = false
  /** Whether anything was printed, or is about to be (gathered fresh texts): what follows needs its `,\n`. */
  private any = false
  /** Where the damage found starts: hits from this entry on are read fresh. */
  private failedAt = 0
  private readonly freshPart: Uint8Array[] = []

  constructor(
    private readonly cache: Cache | undefined,
    private readonly joined: Joined,
    window: Buffer,
  ) {
    this.buffer = window
  }

  *print(readFresh: ReadFresh): Generator<Uint8Array> {
    const {cache, joined} = this
    const {hit, fresh, before} = joined
    let next = 0
    for (let p = 0, at = cache?.bodyAt ?? 0; cache && p < cache.count; p++) {
      const textAt = at
      const textEnd = at + cache.fields[p * 5]
      at = textEnd + 2
      if (next < fresh.length && before[next] <= p) {
        if (!(yield* this.closePiece())) return yield* this.printRest(next, readFresh)
        while (next < fresh.length && before[next] <= p) this.addFresh(fresh[next++])
        yield* this.flushFresh()
      }
      // The window holds this text, its separator and the one before it (a piece starting here is led by it).
      const from = p > 0 ? textAt - 2 : textAt
      if (from < this.from || textEnd + 2 > this.to) {
        if (!(yield* this.closePiece())) return yield* this.printRest(next, readFresh)
        if (!this.refill(from, textEnd + 2)) {
          this.failedAt = p
          return yield* this.printRest(next, readFresh)
        }
      }
      const buffer = this.buffer
      const end = textEnd - this.from
      if (buffer[end] !== NUL || buffer[end + 1] !== NEWLINE) {
        this.failedAt = this.first >= 0 ? this.first : p
        this.first = -1
        return yield* this.printRest(next, readFresh)
      }
      if (!hit[p]) continue
      if (this.first >= 0 && p !== this.last + 1 && !(yield* this.closePiece()))
        return yield* this.printRest(next, readFresh)
      if (this.first < 0) {
        const textStart = textAt - this.from
        const lead = this.any && p > 0
        // The previous entry's separator; a comma already when that entry was gathered from this window.
        if (
          lead &&
          ((buffer[textStart - 2] !== NUL && buffer[textStart - 2] !== COMMA) || buffer[textStart - 1] !== NEWLINE)
        ) {
          this.failedAt = p
          return yield* this.printRest(next, readFresh)
        }
        if (lead) buffer[textStart - 2] = COMMA
        this.first = p
        this.textStart = textStart
        this.start = lead ? textStart - 2 : textStart
        this.separately = this.any && p === 0
      }
      buffer[end] = COMMA
      this.last = p
      this.end = end
    }
    if (!(yield* this.closePiece())) return yield* this.printRest(next, readFresh)
    while (next < fresh.length) this.addFresh(fresh[next++])
    yield* this.flushFresh()
  }

  /** Read the body from file offset `from` into the window, at least up to `to`; false: the file ends before. */
  private refill(from: number, to: number): boolean {
    const cache = this.cache!
    if (to - from > this.buffer.length) this.buffer = Buffer.allocUnsafe(to - from)
    this.from = from
    this.to = from + readFully(cache.fd, this.buffer, 0, Math.min(this.buffer.length, cache.size - from), from)
    return to <= this.to
  }

  /** Print the gathered piece, once no NUL is left in its texts (their separators are commas by now); false: damaged. */
  private *closePiece(): Generator<Uint8Array, boolean> {
    const {first, last} = this
    if (first < 0) return true
    this.first = -1
    const nul = this.buffer.indexOf(NUL, this.textStart)
    if (nul >= 0 && nul < this.end) {
      this.failedAt = first
      return false
    }
    if (this.separately) yield SEPARATOR
    this.any = true
    yield this.buffer.subarray(this.start, this.end)
    for (let p = first; p <= last; p++) this.printed.push(p)
    return true
  }

  /** After damage: the hits from `failedAt` on, read from their Runs, and the fresh texts from `next` on, in listing order. */
  private *printRest(next: number, readFresh: ReadFresh): Generator<Uint8Array> {
    this.damaged = true
    const {hit, dirOf, ids, keys, fresh} = this.joined
    const rest = fresh.slice(next)
    for (let p = this.failedAt; p < this.cache!.count; p++) {
      const entry = hit[p] ? readFreshText(readFresh, ids, dirOf[p], keys, p * K) : undefined
      if (entry) rest.push(entry)
    }
    for (const entry of rest.sort(byListingOrder)) this.addFresh(entry)
    yield* this.flushFresh()
  }

  private addFresh(entry: Fresh): void {
    if (this.any) this.freshPart.push(SEPARATOR)
    this.freshPart.push(entry.text)
    this.any = true
    this.printed.push(entry)
  }

  /** Print the gathered fresh texts, as one piece. */
  private *flushFresh(): Generator<Uint8Array> {
    const part = this.freshPart
    if (part.length) yield part.length === 1 ? part[0] : Buffer.concat(part)
    part.length = 0
  }
}
