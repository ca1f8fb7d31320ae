/**
 * The order of the run index's queued markers (index-markers.ts), worked out
 * from their names without taking them apart (a plain wait looks at every
 * queued name of its queue), and the two forms a reader's queue comes in: a
 * sorted listing of the owner's queue directory, or the owner's cursor
 * (index-queue.ts), read a chunk at a time.
 */
import {tagValue} from './index-queue.js'
import type {CursorLine, QueueCursor} from './queue-cursor.js'
import {queuedEnd} from './index-markers.js'

/** Code-unit order of `a[as, ae)` and `b[bs, be)`, as compareText orders the two substrings (without making them). */
function compareRanges(a: string, as: number, ae: number, b: string, bs: number, be: number): number {
  const n = Math.min(ae - as, be - bs)
  for (let i = 0; i < n; i++) {
    const d = a.charCodeAt(as + i) - b.charCodeAt(bs + i)
    if (d !== 0) return d
  }
  return ae - as - (be - bs)
}

/** Batch order (compareQueueKeys) of two queued marker names, from the names (no parts are made). */
export function compareQueuedNames(a: string, b: string): number {
  const aEnd = queuedEnd(a)
  const bEnd = queuedEnd(b)
  const aAt = a.lastIndexOf('@')
  const bAt = b.lastIndexOf('@')
  return (
    compareRanges(a, 1, aEnd, b, 1, bEnd) ||
    compareRanges(a, aEnd + 19, aAt, b, bEnd + 19, bAt) ||
    compareRanges(a, aAt + 1, a.length, b, bAt + 1, b.length)
  )
}

/**
 * Whether queued name `b` comes after `a` in batch order. The usual case is
 * decided by a native comparison of the whole names: end times of one length
 * that differ (checked from their last characters, where adjacent ones
 * differ) order the names as the end times do.
 */
export function followsInOrder(a: string, aEnd: number, b: string, bEnd: number): boolean {
  if (aEnd === bEnd && a < b) {
    for (let i = aEnd - 1; i > 0; i--) if (a.charCodeAt(i) !== b.charCodeAt(i)) return true
  }
  return compareQueuedNames(a, b) <= 0
}

/**
 * The queued markers a reader works through, in batch order: as listed
 * (names, and their order), or as the owner's cursor holds them, read a
 * chunk at a time as the reader goes (`grow()`).
 */
export interface QueueNames {
  /** Entries known so far. */
  readonly size: number
  /** Whether this came from the cursor (else from listing the queue). */
  readonly cached: boolean
  name(i: number): string
  /** The root tag of entry `i` as a number (tagValue); -1 when its name is not a queued marker's. */
  rootTag(i: number): number
  /** Read more entries (a cursor's next chunk); false when there are no more. */
  grow(): boolean
}

/** A reader's queue as listed: `names`, taken in `order` (indexes into names, in batch order). */
export function listedQueue(names: string[], order: Int32Array): QueueNames {
  return {
    size: order.length,
    cached: false,
    name: (i) => names[order[i]],
    rootTag(i) {
      const name = names[order[i]]
      return tagValue(name, queuedEnd(name) + 10)
    },
    grow: () => false,
  }
}

/** A reader's queue as the owner's cursor holds it, read a chunk at a time (grow()). */
export class CursorQueue implements QueueNames {
  readonly cached = true
  readonly lines: CursorLine[] = []
  constructor(readonly cursor: QueueCursor) {}
  get size(): number {
    return this.lines.length
  }
  name(i: number): string {
    return this.lines[i].name
  }
  rootTag(i: number): number {
    return this.lines[i].root
  }
  grow(): boolean {
    for (;;) {
      const more = this.cursor.read()
      if (more.length > 0) {
        for (const line of more) this.lines.push(line)
        return true
      }
      if (this.cursor.ended) return false
    }
  }
}
