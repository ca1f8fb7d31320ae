/**
 * The faces of `actors inspect`: the Run table, the Run forest, one Run in
 * detail, its generations; and `--watch`, live: the Ink view on a TTY,
 * otherwise the same text as without --watch printed again after every
 * change (NDJSON snapshots under --json), until SIGINT or SIGTERM.
 */
import {formatDuration} from '../../base/platform/duration.js'
import {describeWhere} from '../../kernel/executors/index.js'
import {importView} from '../../base/platform/esm-import.js'
import type {GenerationListing} from '../../kernel/runs/generation-list.js'
import {displayRunName} from '../../base/records/generation-layout.js'
import type {PrintedListing, RunDetail, RunListing} from '../../kernel/history/inspect.js'
import type {Forest} from '../../kernel/history/forest.js'
import {tableRows, treeRows, type Clock, type Layout, type RunRow} from '../../services/view-state/run-rows.js'
import {nestedTableRows} from '../../services/view-state/run-nesting.js'
import {createStateStore, type StateStore} from '../../services/view-state/runs-store.js'
import {stdoutGone} from './stdout-reader.js'
import {liveResult, printedDocumentResult, type DocumentResult, type LiveResult, type TextSinks} from './result.js'
import {formatRunTable, watchRunChanges} from './runs-table.js'
import type {WatchedListing} from '../../services/view-state/runs-store.js'
import {formatTable, inertText, printableLine} from '../../base/platform/text.js'
import {screenWidth} from '../../base/platform/fit-width.js'
import {compactTime} from '../../services/view-state/resource-cells.js'
import {renderForest} from './tree.js'
import {jsonAtDepth, jsonDocument, writeNdjson, writeOut} from './write.js'

const NO_RUNS = 'no Runs yet; start one with `actors run demo`\n'

function noteDamaged(damaged: Array<{state_dir: string; error: string}>, to: TextSinks): void {
  for (const d of damaged) to.note(`actors: skipped ${inertText(d.state_dir)}: ${inertText(d.error)}\n`)
}

/** `inspect`: the table of Runs; `filters` (`--status running`): what narrowed it, named when nothing matched. */
export function plainListing(listing: RunListing, to: TextSinks, filters = ''): void {
  // A damaged Run dir keeps its row (STATUS damaged): a Run must not leave the table by damaging its own files.
  const rows = [...tableRows(listing), ...listing.damaged.map(damagedRow)]
  to.out(formatRunTable(rows, 'table', {now: Date.now(), readAt: Date.now()}))
  if (!rows.length) to.note(filters ? `no Runs match ${filters}\n` : NO_RUNS)
  noteDamaged(listing.damaged, to)
}

/** The table row of a Run dir that could not be read: its id (the dir's name) and `damaged`; the reason goes to stderr. */
function damagedRow(damaged: {state_dir: string}): RunRow {
  const run = damaged.state_dir.slice(damaged.state_dir.lastIndexOf('/') + 1)
  return {
    key: damaged.state_dir,
    prefix: '',
    run,
    recipe: null,
    status: 'damaged',
    started_at: null,
    duration_ms: null,
    parent: null,
    usage: '',
  }
}

/**
 * `inspect` without filters: under --json, the document built from each
 * Run's printed text (`printed`: history/inspect.ts printedListing, byte for
 * byte what jsonDocument() makes of `read()`'s listing, without building
 * it); otherwise the table of `read()`.
 */
export function everyRunResult(
  printed: (print: (summary: object) => string) => PrintedListing,
  read: () => RunListing,
): DocumentResult<RunListing> {
  return printedDocumentResult(read, () => printedDocument(printed((summary) => jsonAtDepth(summary, 2))), plainListing)
}

/**
 * The bytes of jsonDocument({runs, damaged}) from the Runs' texts at depth
 * 2, in pieces to write in order: the frame's opening, the listing's pieces
 * as they come (each valid only until the next is taken: the cache streams
 * through one buffer, see history/listing-text.ts), then the rest of the
 * frame with the damaged Run dirs, known once the Runs were read.
 */
export function* printedDocument(listing: PrintedListing): Generator<Uint8Array> {
  // The frame is jsonDocument's own with no Runs: `{\n  "runs": [],\n  "damaged": ...}\n`; the Runs go inside its `[]`.
  const open = '{\n  "runs": ['
  let any = false
  for (const piece of listing.texts) {
    if (!any) yield Buffer.from(open + '\n')
    any = true
    yield piece
  }
  const frame = jsonDocument({runs: [], damaged: listing.damaged})
  yield Buffer.from(any ? '\n  ' + frame.slice(open.length) : frame)
}

/** `inspect --tree`: the Run forest; `filters` as for plainListing. */
export function plainForest(forest: Forest, to: TextSinks, filters = ''): void {
  to.out(renderForest(forest.forest))
  if (!forest.forest.length) to.note(filters ? `no Runs match ${filters}\n` : NO_RUNS)
  noteDamaged(forest.damaged, to)
}

/** `inspect RUN --generations`: one row per generation, times as the Runs table shows them (--json: exact). */
export function plainGenerations(listing: GenerationListing, to: TextSinks): void {
  const now = Date.now()
  const rows = listing.generations.map((g) => [
    String(g.generation),
    g.run_instance_id,
    g.status,
    compactTime(g.started_at, now),
    compactTime(g.ended_at, now),
    String(g.exit_code ?? '-'),
    g.current ? 'current' : '',
  ])
  to.out(
    formatTable(['GEN', 'INSTANCE', 'STATUS', 'STARTED', 'ENDED', 'EXIT', ''], rows, screenWidth(), {
      key: ['GEN', 'INSTANCE', 'STATUS'],
    }) + '\n',
  )
}

/** A budget crossing as result.json records it (runs/tree-limits.ts budgetMark), or undefined. */
function budgetLine(result: RunDetail['result']): string | undefined {
  if (result?.budget_exceeded !== true) return undefined
  const b = result.budget as {root?: unknown; spent_tokens?: unknown; budget_tokens?: unknown} | undefined
  return typeof b?.spent_tokens === 'number' && typeof b.budget_tokens === 'number'
    ? `exceeded: ${b.spent_tokens} of ${b.budget_tokens} tokens (tree ${String(b.root)})`
    : 'exceeded'
}

/** `inspect RUN`: one Run in detail. */
export function plainDetail(d: RunDetail, to: TextSinks): void {
  const lines = [
    `run:        ${displayRunName(d.run, d.generation)}`,
    `instance:   ${d.run_instance_id}`,
    `generation: ${d.generation}`,
    `recipe:     ${d.recipe ?? '(ad-hoc)'}`,
    `status:     ${d.status}${d.exit_code !== null ? ` (exit ${d.exit_code})` : ''}${d.result?.reason ? ` reason ${d.result.reason}` : ''}`,
    `argv:       ${JSON.stringify(d.meta.argv)}`,
    `started:    ${d.started_at ?? '-'}`,
    `duration:   ${formatDuration(d.duration_ms ?? undefined)}`,
    `parent:     ${d.parent ?? '-'}`,
    `state dir:  ${d.state_dir}`,
  ]
  const budget = budgetLine(d.result)
  if (budget) lines.push(`budget:     ${budget}`)
  if (describeWhere(d))
    lines.push(`executor:   ${d.executor}${d.job_id ? ` job ${d.job_id}` : ''}${d.node ? ` on ${d.node}` : ''}`)
  if (d.controls.length) lines.push(`controls:   ${d.controls.join(', ')}`)
  for (const a of d.artifacts)
    lines.push(`artifact:   ${a.name} ${a.path} ${a.bytes ?? 'missing'} bytes ${a.sha256 ?? ''}`.trimEnd())
  if (d.trace.length) {
    lines.push('trace:')
    for (const e of d.trace)
      lines.push(`  ${e.ts.slice(11, 23)} ${e.kind}${e.summary ? `  ${printableLine(e.summary)}` : ''}`)
  }
  // Every field but the summaries (already one inert line each) is as run.json and the Trace say: a Run writes both.
  to.out(lines.map((line) => inertText(line)).join('\n') + '\n')
}

/** `inspect --tree --watch` (`RUN --watch`: its subtree): `read` gives the forest. */
export function watchForest(home: string, ref: string | undefined, read: () => Forest): LiveResult {
  return watchRuns(home, read, {
    title: `actors · Run tree${ref ? ` of ${ref}` : ''} · ${home}`,
    layout: 'tree',
    toRows: treeRows,
    format: (forest) => renderForest(forest.forest),
  })
}

/** `inspect --watch`: `read` gives the (filtered) listing. */
export function watchListing(home: string, read: () => RunListing): LiveResult {
  return watchRuns(home, read, {
    title: `actors · Runs · ${home}`,
    layout: 'table',
    // The live list nests children under their parents, as the card and the tree do.
    toRows: nestedTableRows,
    format: (listing, clock) => formatRunTable(tableRows(listing), 'table', clock),
  })
}

/** What a watch shows: a title (Ink), the layout, the rows of a read and its plain text. */
interface WatchView<T> {
  title: string
  layout: Layout
  toRows: (data: T) => RunRow[]
  format: (data: T, clock: Clock) => string
}

/**
 * `read` (the listing or the forest) shown live. The store
 * reads once on creation: an unknown RUN fails fast there (exit 4), before
 * any watching.
 */
function watchRuns<T extends WatchedListing>(home: string, read: () => T, view: WatchView<T>): LiveResult {
  const plainly = (show: (snapshot: {data: T; readAt: number; now: number}, first: boolean) => void) => async () => {
    const store = createStateStore(home, read, {tickMs: 0})
    try {
      const stop = new AbortController()
      const end = () => stop.abort()
      process.once('SIGINT', end)
      process.once('SIGTERM', end)
      // A reader that went away (`| head`) ends the watch too, within a second even while nothing changes:
      // a failed write says so only at the next frame.
      const gone = stdoutGone()
      if (gone.aborted) end()
      else gone.addEventListener('abort', end, {once: true})
      await watchRunChanges(store, {toRows: view.toRows, show, signal: stop.signal})
    } finally {
      store.close()
    }
    return undefined
  }
  return liveResult({
    json: plainly((snapshot) =>
      writeNdjson({type: 'snapshot', at: new Date(snapshot.readAt).toISOString(), ...snapshot.data}),
    ),
    plain: plainly((snapshot, first) =>
      writeOut((first ? '' : '\n') + (view.format(snapshot.data, snapshot) || '(no Runs)\n')),
    ),
    ink: async () => {
      const store: StateStore<T> = createStateStore(home, read, {tickMs: 1000})
      try {
        const {showRunsLive} = await importView<typeof import('../../../views/runs-live.js')>('runs-live')
        await showRunsLive(store, view)
      } finally {
        store.close()
      }
      return undefined
    },
  })
}
