/**
 * The cache behind a plain `inspect --json` (every Run, no filter): per
 * finished Run, the exact bytes its summary has inside the printed document,
 * so a warm listing copies those bytes from the file to stdout instead of
 * building 2,000 summary objects, stringifying and encoding them again.
 *
 * Staleness works as in ./listing-cache.ts (read its header): an entry serves
 * while run.json keeps the key it had when the entry was made, one stat per
 * Run. Only finished Runs whose run.json names their own id and state dir are
 * kept, as there, and only those whose id and created_at are ASCII (the
 * listing compares them as bytes).
 *
 * Beyond start-up and the stats, what a warm listing of 2,000 Runs cost was
 * mostly memory: objects and strings per Run (garbage collection), a buffer
 * of the whole file (first touches of fresh pages cost more than reading
 * into them), and small functions called per Run, which V8 then compiled at
 * a cost of milliseconds. So the file is read without an object, a string
 * or a call per Run: a compact JSON line
 *   {"schema":"actors-listing-text-v3","endian":"LE","base":"<runs dir>/","count":N,"list":LB,"names":NB,"body":BB}
 * then, in the machine's byte order (`endian`), the N entries' sections, in
 * listing order (created_at, then Run id):
 *   keys:   N × 6 float64: the exact key of the run.json each text was made
 *           from (inode, size, mtime and ctime in seconds and nanoseconds:
 *           platform/file-key.ts exactFileKeysInto)
 *   fields: N × 5 uint32: the text's length, its Run dir (an index in
 *           `list`), and where its Run id and created_at lie in `names`
 *           (offset, id length, created_at length)
 *   list:   LB bytes, UTF-8: the names of the Run dirs the listing saw when
 *           it wrote the file, sorted, joined by `/` (which no name holds)
 *   names:  NB bytes: the entries' Run ids and created_at values (ASCII)
 *   body:   BB bytes: each entry's text followed by a NUL and a newline
 *           (JSON text never holds a raw NUL: inside strings it is escaped).
 * A listing sorts the Run dirs' names and joins them: when that equals
 * `list` (one string comparison), an entry's dir index is its dir's index
 * now; otherwise they are matched by name, and the file is rewritten. It
 * keys the entries' run.json files into one array in entry order and
 * compares it with `keys` as bytes, in blocks: an entry whose key is
 * unchanged is a hit. Every other Run dir is read fresh. The hits' texts are
 * copied from the body to stdout through one reused 64 KiB buffer, each
 * separator's NUL made a comma (the separator is exactly the `,\n` between
 * Runs in the document), and the Runs read fresh are merged in where a
 * binary search of `names` places them.
 *
 * What is read is checked before it is trusted: the header (schema, byte
 * order, the base: a state root moved elsewhere prints other state dirs),
 * the sections' sizes against the file's, the names ASCII and in range, no
 * Run dir claimed by two entries. Every separator is checked where the
 * lengths say as the body goes by, and a text is printed only once no other
 * NUL was found in it. A file that fails a check before the output starts
 * is no cache: every Run is read, and the file written anew. A text that
 * fails while printing is read from its Run instead, with every hit after
 * it, and the file is rewritten. Never a wrong listing.
 *
 * The work is split by what it does: the file's layout, opening and checking
 * it (listing-text-file.ts), matching its entries with the Run dirs now
 * (listing-text-join.ts), printing (listing-text-print.ts) and writing the
 * file anew (listing-text-save.ts); this module runs them in order.
 */
import {closeSync} from 'node:fs'
import {listingTextFile, openCache, WINDOW_BYTES, type ReadFresh} from './listing-text-file.js'
import {joinRuns} from './listing-text-join.js'
import {Printer} from './listing-text-print.js'
import {saveCache} from './listing-text-save.js'

/**
 * The printed texts of the Run dirs `runIds` (sorted here, in place) under
 * `base` (the runs dir with a trailing separator), in listing order, as
 * pieces of the document between its `[` and `]`: the Runs' texts with
 * `,\n` between them. Cached texts of Runs whose run.json is unchanged come
 * from the cache file; every other Run dir is read with `readFresh`. A piece
 * may be a reused buffer: it is valid only until the next one is taken. Once
 * all were taken, the cache is rewritten when it gained entries, lost most of
 * them, was damaged or the Run dirs changed (best effort, without fsync: it
 * is only a cache).
 */
export function* listingTexts(
  home: string,
  base: string,
  runIds: string[],
  readFresh: ReadFresh,
): Generator<Uint8Array> {
  const file = listingTextFile(home)
  const window = Buffer.allocUnsafeSlow(WINDOW_BYTES)
  const ids = runIds.sort()
  const list = ids.join('/')
  const cache = openCache(file, base, window)
  try {
    const joined = joinRuns(cache, base, ids, list, readFresh)
    // Without hits the body is not read.
    const printer = new Printer(joined.hits > 0 ? cache : undefined, joined, window)
    yield* printer.print(readFresh)
    const changed =
      !joined.sameDirs ||
      joined.added > 0 ||
      joined.damaged ||
      printer.damaged ||
      (cache !== undefined && joined.hits * 2 < cache.count)
    if (changed) saveCache(file, base, list, cache, joined, printer.printed)
  } finally {
    if (cache) closeSync(cache.fd)
  }
}
