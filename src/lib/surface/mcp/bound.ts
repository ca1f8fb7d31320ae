/**
 * Keeping every MCP result within 64 KiB (text and structured content
 * together, the text carrying the result too; SPEC: Agents over MCP). Documents that can grow are cut where the
 * least is lost (oldest finished Runs, long outputs, old trace events), and
 * the cut is said in a `cut` field with how to get the rest.
 */
import {inertJson, inertText} from '../../base/platform/text.js'
import {isTerminal} from '../../base/records/run.js'
import type {RunListing, RunDetail} from '../../kernel/history/inspect.js'
import type {Forest, TreeNode} from '../../kernel/history/forest.js'
import type {BatchDocument} from '../../services/wait/batch.js'

export const MAX_RESULT_BYTES = 64 * 1024
/** Room kept for the note that says what was cut (appended to the text after bounding). */
const NOTE_BYTES = 512

/**
 * A result's text content: the summary line, then the result itself (the
 * document as JSON, or a tool's own rendering such as a log page's text).
 * Several hosts show a model the text alone, and the MCP specification asks
 * that structured content also travel serialized as text.
 */
export function resultText(summary: string, body: string): string {
  // Hosts show this text, some on a terminal: what a Run wrote reaches the summary line escaped.
  return `${inertText(summary, {multiline: true})}\n${body}`
}

/**
 * What a result costs against the cap: its text content (the summary and the
 * document as JSON, the larger of the renderings a tool gives) plus its
 * structured content, as sent.
 */
export function resultBytes(summary: string, document: unknown): number {
  const json = JSON.stringify(document)
  const text = resultText(summary, inertJson(json))
  return Buffer.byteLength(JSON.stringify([{type: 'text', text}])) + Buffer.byteLength(json)
}

/** Whether a result fits the cap (by default, with room for a note about what was cut). */
export function fits(summary: string, document: unknown, cap = MAX_RESULT_BYTES - NOTE_BYTES): boolean {
  return resultBytes(summary, document) <= cap
}

/** The largest k in [0, n] for which fitsWith(k) holds (fitsWith is monotone: true up to some k). */
function largestFitting(n: number, fitsWith: (k: number) => boolean): number {
  let low = 0
  let high = n
  while (low < high) {
    const mid = Math.ceil((low + high) / 2)
    if (fitsWith(mid)) low = mid
    else high = mid - 1
  }
  return low
}

/** A Run listing within the cap: every live Run, then the most recent finished ones. */
export function boundListing(
  listing: RunListing,
  summary: string,
  cap = MAX_RESULT_BYTES - NOTE_BYTES,
): RunListing & {cut?: unknown} {
  if (fits(summary, listing, cap)) return listing
  const live = listing.runs.filter((r) => !isTerminal(r.status))
  const finished = listing.runs.filter((r) => isTerminal(r.status)).reverse()
  const preferred = [...live, ...finished]
  const build = (k: number) => {
    const kept = new Set(preferred.slice(0, k))
    return {
      runs: listing.runs.filter((r) => kept.has(r)),
      damaged: listing.damaged.slice(0, 16),
      cut: {
        runs_total: listing.runs.length,
        runs_shown: kept.size,
        kept: 'live Runs first, then the most recent finished ones',
        hint: 'narrow it: inspect {status: ["running"]}, inspect {limit: N}, or inspect {run} for one Run',
      },
    }
  }
  return build(largestFitting(preferred.length, (k) => fits(summary, build(k), cap)))
}

/** A Run forest within the cap: the newest trees first, each cut in preorder (parents before their children). */
export function boundForest(
  forest: Forest,
  summary: string,
  cap = MAX_RESULT_BYTES - NOTE_BYTES,
): Forest & {cut?: unknown} {
  if (fits(summary, forest, cap)) return forest
  const order: Array<{node: TreeNode; parent: TreeNode | undefined}> = []
  const visit = (node: TreeNode, parent: TreeNode | undefined) => {
    order.push({node, parent})
    for (const child of node.children) visit(child, node)
  }
  for (const root of [...forest.forest].reverse()) visit(root, undefined)
  const build = (k: number) => {
    const copies = new Map<TreeNode, TreeNode>()
    const roots: TreeNode[] = []
    for (const {node, parent} of order.slice(0, k)) {
      const copy = {...node, children: []}
      copies.set(node, copy)
      if (parent) copies.get(parent)!.children.push(copy)
      else roots.push(copy)
    }
    return {
      forest: roots.reverse(),
      damaged: forest.damaged.slice(0, 16),
      cut: {
        runs_total: order.length,
        runs_shown: k,
        hint: 'inspect {run: ROOT, tree: true} shows one subtree; inspect {run} one Run',
      },
    }
  }
  return build(largestFitting(order.length, (k) => fits(summary, build(k), cap)))
}

/** A field of a Run's detail larger than this may be left out when the detail does not fit otherwise. */
const BIG_FIELD_BYTES = 1024

/**
 * One Run's detail within the cap: fewer trace events (the newest kept); when
 * no trace at all is not enough (a Run's argv, values or command line can be
 * hundreds of KB, and a Run writes its own run.json), its big fields are left
 * out, largest first, and named in `cut.omitted`, so the small ones (id,
 * status, run_instance_id, exit code, times) always come back.
 */
export function boundDetail(
  detail: RunDetail,
  summary: string,
  cap = MAX_RESULT_BYTES - NOTE_BYTES,
): RunDetail & {cut?: unknown} {
  if (fits(summary, detail, cap)) return detail
  const omitted: string[] = []
  let kept: RunDetail = detail
  const build = (k: number) => ({
    ...kept,
    trace: kept.trace.slice(kept.trace.length - k),
    cut: {
      trace_total: kept.trace.length,
      trace_shown: k,
      ...(omitted.length ? {omitted: [...omitted]} : {}),
      hint: omitted.length
        ? "the Run's run.json in its state_dir holds the omitted fields, its trace.jsonl every event"
        : "the Run's trace.jsonl in its state_dir holds every event",
    },
  })
  for (const field of bigFields(detail)) {
    if (fits(summary, build(0), cap)) break
    kept = withoutField(kept, field)
    omitted.push(field)
  }
  return build(largestFitting(kept.trace.length, (k) => fits(summary, build(k), cap)))
}

/** The detail's fields (top level, and one level into meta and result) over BIG_FIELD_BYTES, largest first. */
function bigFields(detail: RunDetail): string[] {
  const sized: Array<[string, number]> = []
  const add = (path: string, value: unknown) => {
    const bytes = Buffer.byteLength(JSON.stringify(value) ?? '')
    if (bytes > BIG_FIELD_BYTES) sized.push([path, bytes])
  }
  for (const [key, value] of Object.entries(detail)) {
    if (key === 'trace') continue
    const nested = (key === 'meta' || key === 'result') && value !== null && typeof value === 'object'
    if (!nested) add(key, value)
    else for (const [inner, innerValue] of Object.entries(value)) add(`${key}.${inner}`, innerValue)
  }
  return sized.sort((a, b) => b[1] - a[1]).map(([path]) => path)
}

/** A copy of the detail without the field at `path` (`key` or `meta.key` / `result.key`). */
function withoutField(detail: RunDetail, path: string): RunDetail {
  const [key, inner] = path.split('.') as [keyof RunDetail, string | undefined]
  const copy = {...detail} as Record<string, unknown>
  if (inner === undefined) delete copy[key]
  else {
    const nested = {...(copy[key] as Record<string, unknown>)}
    delete nested[inner]
    copy[key] = nested
  }
  return copy as unknown as RunDetail
}

const OUTPUT_STEPS = [4000, 2000, 1000, 500, 200, 0]
/** Unknown ids a bounded batch still lists. */
const UNKNOWN_KEPT = 100

/**
 * A completion batch within the cap: row outputs shortened first, then rows
 * moved to `overflow` (their members are still delivered, and listed in
 * overflow_runs for `inspect`).
 */
export function boundBatch(
  batch: BatchDocument,
  summary: string,
  cap = MAX_RESULT_BYTES - NOTE_BYTES,
): BatchDocument & {cut?: unknown} {
  if (fits(summary, batch, cap)) return batch
  // Unknown ids are the caller's own request echoed back: the first ones are kept, the rest counted.
  let unknownCut = {}
  // A batch of no explicit ids (a plain wait) may carry no list at all.
  if (Array.isArray(batch.unknown) && batch.unknown.length > UNKNOWN_KEPT) {
    unknownCut = {unknown_total: batch.unknown.length, unknown_shown: UNKNOWN_KEPT}
    batch = {...batch, unknown: batch.unknown.slice(0, UNKNOWN_KEPT)}
    const cut = {...unknownCut, hint: 'wait for fewer Runs at once'}
    if (fits(summary, {...batch, cut}, cap)) return {...batch, cut}
  }
  const hint = 'logs {run} pages through a whole output; inspect {run} shows one Run'
  for (const chars of OUTPUT_STEPS) {
    const shortened = {
      ...batch,
      rows: batch.rows.map((r) => ({...r, output: r.output.slice(Math.max(0, r.output.length - chars))})),
      cut: {...unknownCut, output_chars: chars, hint},
    }
    if (fits(summary, shortened, cap)) return shortened
  }
  const rows = batch.rows.map((r) => ({...r, output: ''}))
  const build = (k: number) => ({
    ...batch,
    rows: rows.slice(0, k),
    overflow: batch.overflow + rows.length - k,
    overflow_runs: [...rows.slice(k).map((r) => r.run), ...batch.overflow_runs],
    cut: {...unknownCut, output_chars: 0, rows_moved_to_overflow: rows.length - k, hint},
  })
  return build(largestFitting(rows.length, (k) => fits(summary, build(k), cap)))
}

/** A list document (`{[key]: items}`) within the cap: the first items kept. */
export function boundList<T extends Record<string, unknown>>(
  doc: T,
  key: keyof T & string,
  summary: string,
  hint: string,
  cap = MAX_RESULT_BYTES - NOTE_BYTES,
): T & {cut?: unknown} {
  if (fits(summary, doc, cap)) return doc
  const items = doc[key] as unknown[]
  const build = (k: number) => ({
    ...doc,
    [key]: items.slice(0, k),
    cut: {[`${key}_total`]: items.length, [`${key}_shown`]: k, hint},
  })
  return build(largestFitting(items.length, (k) => fits(summary, build(k), cap)))
}

/** The last resort for a document no shrinker brought under the cap: say so and how to get it. */
export function tooLarge(document: unknown, hint: string): {cut: unknown} {
  return {cut: {bytes: Buffer.byteLength(JSON.stringify(document)), limit: MAX_RESULT_BYTES, hint}}
}
