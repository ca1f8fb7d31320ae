/**
 * The tools of `actors mcp` (SPEC: Agents over MCP). Each calls the kernel
 * functions its CLI command calls, so a tool's structured content is the
 * command's `--json` document. Inputs mirror the CLI: Recipe values as an
 * object, durations as strings (`30s`, `5m`).
 */
import * as z from 'zod/v4'
import {controlRun} from '../../services/control/control.js'
import {SERVICE_KINDS} from '../../services/music/service-kinds.js'
import {usageError} from '../../base/platform/errors.js'
import {resolveRunRef} from '../../base/platform/home.js'
import {inspectRun, listRunSummaries, type RunListing} from '../../kernel/history/inspect.js'
import {callerLineage} from '../../kernel/runs/lineage.js'
import {readLogPage} from '../../kernel/runs/logs.js'
import {parseDuration} from '../../base/platform/duration.js'
import {recipesDocument} from '../../kernel/recipes/document.js'
import {
  findLaunchRecipe,
  launchOverrides,
  launchPrepared,
  prepareAdHoc,
  prepareRecipe,
} from '../../services/launch/run-launcher.js'
import {requireRun, runFile} from '../../kernel/runs/store.js'
import {LIVE_STATUSES, TERMINAL_STATUSES} from '../../base/records/run.js'
import {buildForest, flatten} from '../../kernel/history/forest.js'
import {unknownRunsProblem, type BatchDocument} from '../../services/wait/batch.js'
import {BatchNotShown, waitForBatch} from '../../services/wait/deliver.js'
import {boundBatch, boundDetail, boundForest, boundList, boundListing, fits, MAX_RESULT_BYTES} from './bound.js'
import {enforceNameOwner, enforceRunOwner} from './owner-guard.js'
import {recipeValueWords} from './recipe-values.js'
import {enforceLaunchPolicy, recipeAllowed} from './policy.js'
import {policyRule} from './policy-rule.js'
import {lockTool} from './lock-tool.js'
import {closeTool, rerunTool, sendTool} from './steer-tools.js'
import {defineTool, durationInput, type McpTool} from './tool.js'

const runRef = () => z.string().min(1).describe('Run id (or its state dir)')
const STATUSES = [...LIVE_STATUSES, ...TERMINAL_STATUSES] as [string, ...string[]]

/** How long `wait` blocks by default: below the 60 s after which common clients give up on a request. */
export const DEFAULT_WAIT_TIMEOUT = '45s'
/** How often `wait` sends a progress heartbeat. */
const HEARTBEAT_MS = 5000

const runTool = defineTool({
  name: 'run',
  title: 'Launch a Run',
  description: [
    'Launch a Recipe (or, when this server allows it, an ad-hoc command) as a detached, supervised Run and return at once with its id.',
    'Use it to start background work (builds, tests, long jobs, sub-agents); then use `wait` to collect results, `logs` to read output, `control` to stop it.',
    'Give exactly one of `recipe` (see the `recipes` tool for names and their args) or `command` (an argv, never run through a shell).',
    'The Run outlives this session: a later session can still wait for it.',
  ].join(' '),
  input: () => ({
    recipe: z
      .string()
      .min(1)
      .optional()
      .describe('Recipe name, e.g. build or music/playback (the recipes tool lists them)'),
    command: z
      .array(z.string())
      .min(1)
      .optional()
      .describe('ad-hoc argv, e.g. ["make", "-j2"] (needs actors mcp --allow-adhoc)'),
    values: z
      .record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.array(z.string())]))
      .optional()
      .describe('the Recipe\'s args by name, e.g. {"seconds": 5}'),
    name: z
      .string()
      .optional()
      .describe(
        'Run id to use (letters, digits, _ . -); default: generated from the Recipe name, or PARENT.N inside a Run',
      ),
    cwd: z.string().optional().describe('working directory of the command'),
    timeout: durationInput().optional().describe('end the Run after this long (500ms, 30s, 5m, 1h)'),
    retry: z.number().int().min(1).max(100).optional().describe('total attempts when the command fails'),
    silent: z.boolean().optional().describe('never report this Run in a completion batch'),
    max_parallel: z
      .number()
      .int()
      .min(1)
      .optional()
      .describe('children of this Run running at once (more wait as queued)'),
    budget_tokens: z.number().int().min(1).optional().describe('token budget for the whole tree rooted here'),
    on: z
      .string()
      .optional()
      .describe(
        "where the supervisor runs: local or slurm (default: the Recipe's executor, else $ACTORS_EXECUTOR, else local)",
      ),
    fork: z
      .union([z.boolean(), z.number().int().min(1)])
      .optional()
      .describe("inside a Run: the child's inbox starts with the Run's last N inbox messages (true: all of them)"),
  }),
  async call(input, {home, policy, recipesFlag}) {
    if ((input.recipe === undefined) === (input.command === undefined)) {
      throw usageError(
        'give exactly one of recipe or command',
        'e.g. {"recipe": "hello", "values": {"name": "Ada"}} or {"command": ["make", "test"]}',
      )
    }
    if (input.command !== undefined && input.values !== undefined)
      throw usageError(
        'values are for Recipes; an ad-hoc command takes its arguments in command',
        'put the arguments into the command argv',
      )
    enforceLaunchPolicy(policy, input.command !== undefined ? {command: true} : {recipe: input.recipe!})
    enforceNameOwner(policy, home, input.name)
    const prepared =
      input.command !== undefined
        ? prepareAdHoc(input.command)
        : prepareLaunchRecipe(home, input.recipe!, recipesFlag, input.values)
    const overrides = launchOverrides({
      ...input,
      'max-parallel': input.max_parallel,
      'budget-tokens': input.budget_tokens,
    })
    // The Run records this server's policy, and every launch in its tree is held to it (launch/tree-policy.ts).
    const launched = launchPrepared(home, prepared, {...overrides, policy: [policyRule(policy, home, recipesFlag)]})
    return {
      document: launched,
      summary: `${launched.status} ${launched.run} (state dir ${launched.state_dir}); collect it with wait`,
    }
  },
})

/** The Recipe to launch with its values as NAME=VALUE words (a list only for an array arg: recipe-values.ts). */
function prepareLaunchRecipe(
  home: string,
  name: string,
  recipesFlag: string | undefined,
  values: Parameters<typeof recipeValueWords>[1],
) {
  const recipe = findLaunchRecipe(home, name, recipesFlag)
  return prepareRecipe(recipe, recipeValueWords(recipe, values))
}

const controlTool = defineTool({
  name: 'control',
  title: 'Control a Run',
  description: [
    'Act on a live Run: pause (SIGSTOP), resume, stop (SIGTERM to its whole process tree, SIGKILL after its grace; status cancelled), kill (SIGKILL; killed),',
    "status (the kernel's view merged with the service's), or an action its Recipe declares (inspect shows `controls`), with an optional value.",
    'stop and kill also end its descendant Runs.',
  ].join(' '),
  input: () => ({
    run: runRef(),
    action: z.string().min(1).max(64).describe('pause, resume, stop, kill, status, or a declared action'),
    value: z.string().max(4096).optional().describe('value for a declared action, e.g. 40 for volume'),
  }),
  async call({run, action, value}, {home, policy}) {
    enforceRunOwner(policy, home, run)
    const outcome = await controlRun(home, run, action, value, SERVICE_KINDS)
    const status = 'status' in outcome && typeof outcome.status === 'string' ? ` → ${outcome.status}` : ''
    return {document: outcome, summary: `${action} ${run}${status}`}
  },
})

const inspectTool = defineTool({
  name: 'inspect',
  title: 'Inspect Runs',
  description: [
    'Read Runs without changing them. No run: the table of Runs (filter with status, bound with limit). With run: its meta, result, declared controls, artifacts and trace tail.',
    'tree: the Run forest (or the subtree of run) with status, duration and token usage per node.',
    'Use it to find Run ids, check progress, or see why a Run failed; read its output with logs.',
  ].join(' '),
  readOnly: true,
  input: () => ({
    run: runRef().optional(),
    tree: z.boolean().optional().describe('the Run forest, or the subtree of run'),
    status: z.array(z.enum(STATUSES)).optional().describe('only Runs with these statuses, e.g. ["running","paused"]'),
    limit: z
      .number()
      .int()
      .min(1)
      .optional()
      .describe('only the N most recent Runs (by start time), plus every live one'),
  }),
  async call({run, tree, status, limit}, {home}) {
    if (tree) {
      const forest = buildForest(home, run)
      const count = forest.forest.flatMap(flatten).length
      return {
        document: forest,
        summary: `${forest.forest.length} tree(s), ${count} Run(s)`,
        bound: (doc, s) => boundForest(doc, s),
      }
    }
    if (run !== undefined) {
      const detail = inspectRun(home, run)
      const exit = detail.exit_code !== null ? ` (exit ${detail.exit_code})` : ''
      return {
        document: detail,
        summary: `${detail.run} ${detail.status}${exit}`,
        bound: (doc, s) => boundDetail(doc, s),
      }
    }
    // The kernel's --limit (most recent by start time, live Runs never cut) reads only what it returns.
    const listing = listRunSummaries(home, {statuses: status ? new Set(status) : undefined, limit})
    return {document: listing, summary: listingSummary(listing), bound: (doc, s) => boundListing(doc, s)}
  },
})

/** "12 Runs: 2 running, 10 done". */
export function listingSummary(listing: RunListing): string {
  const counts = new Map<string, number>()
  for (const r of listing.runs) counts.set(r.status, (counts.get(r.status) ?? 0) + 1)
  const parts = [...counts].map(([s, n]) => `${n} ${s}`)
  return `${listing.runs.length} Run(s)${parts.length ? `: ${parts.join(', ')}` : ''}`
}

const waitTool = defineTool({
  name: 'wait',
  title: 'Wait for Runs',
  description: [
    'Block until Runs are terminal, then return one completion batch: a row per finished Run with status, summary, output tail and artifacts.',
    "Default: every unreported Run of this server's owner. Each finished Run is reported once: the next wait never repeats it.",
    `Returns after timeout (default ${DEFAULT_WAIT_TIMEOUT}) with timed_out: true and the still pending Runs; just call wait again.`,
    'any: return as soon as one is done. Use this instead of polling inspect.',
  ].join(' '),
  readOnly: false,
  input: () => ({
    runs: z.array(runRef()).optional().describe('Run ids to wait for (default: every unreported Run of the owner)'),
    any: z.boolean().optional().describe('return once at least one Run is terminal'),
    timeout: durationInput()
      .optional()
      .describe(`give up waiting after this long (default ${DEFAULT_WAIT_TIMEOUT}); 0 looks once`),
    settle: durationInput()
      .optional()
      .describe('ends this close together come in one batch (default 200ms; 0: none); at most 5 windows in all'),
  }),
  async call({runs, any, timeout, settle}, context) {
    const {home, policy} = context
    const request = {
      home,
      owner: policy.owner,
      ids: runs && runs.length > 0 ? [...new Set(runs.map((ref) => resolveRunRef(home, ref)))] : undefined,
      any: any ?? false,
      timeoutMs: parseDuration(timeout ?? DEFAULT_WAIT_TIMEOUT, 'timeout'),
      settleMs: settle === undefined ? undefined : parseDuration(settle, 'settle'),
      scope: callerLineage(home).parent,
      signal: context.signal,
    }
    const started = Date.now()
    context.heartbeat(0, 'waiting')
    const beat = setInterval(
      () => context.heartbeat(Math.round((Date.now() - started) / 1000), 'still waiting'),
      HEARTBEAT_MS,
    )
    // The batch is marked reported only once its response was written, as the CLI does after printing.
    let shown: (doc: BatchDocument) => void = () => {}
    const document = new Promise<BatchDocument>((resolve) => (shown = resolve))
    const delivery = waitForBatch(request, (doc) => {
      shown(doc)
      // A call cancelled now never gets its response: withdraw the claim so the next wait delivers these Runs.
      return new Promise<void>((resolve, reject) => {
        context.responseSent().then(resolve)
        context.signal.addEventListener(
          'abort',
          () => reject(new BatchNotShown('the wait was cancelled before its batch was sent')),
          {once: true},
        )
        if (context.signal.aborted) reject(new BatchNotShown('the wait was cancelled before its batch was sent'))
      })
    })
    let doc: BatchDocument
    try {
      doc = await Promise.race([document, delivery.then((o) => o.document)])
    } finally {
      clearInterval(beat)
    }
    const requested = request.ids?.length ?? 0
    const unknownOnly =
      requested > 0 && doc.members === 0 && doc.attention.length === 0 && doc.unknown.length === requested
    const summary = batchSummary(doc)
    const problem = unknownOnly ? unknownRunsProblem(doc) : undefined
    return {
      document: doc,
      summary,
      bound: (d, s) => boundBatch(d, s),
      error: problem ? `${problem.message}\n  fix: ${problem.fix}` : undefined,
    }
  },
})

/** "3 finished (2 done, 1 failed); 1 pending" or "timed out: nothing finished; 2 pending". */
export function batchSummary(doc: BatchDocument): string {
  const counts = Object.entries(doc.counts).map(([s, n]) => `${n} ${s}`)
  const head =
    doc.members > 0
      ? `${doc.members} finished (${counts.join(', ')})`
      : doc.timed_out
        ? 'timed out: nothing finished'
        : 'nothing to wait for'
  const attention = doc.attention.length ? `; ${doc.attention.length} asking for attention` : ''
  return `${head}${attention}; ${doc.pending_count} pending`
}

const logsTool = defineTool({
  name: 'logs',
  title: "Read a Run's output",
  description: [
    "Read a Run's stdout or stderr by byte offset, one page at a time (at most 64 KiB).",
    'Start at offset 0 (or a late offset for the end: size is in the result); continue from next_offset until eof. A page may be shorter than limit_bytes.',
    'Output stays readable after the Run ended.',
  ].join(' '),
  readOnly: true,
  input: () => ({
    run: runRef(),
    offset: z.number().int().min(0).optional().describe('byte offset to start at (default 0)'),
    limit_bytes: z
      .number()
      .int()
      .min(1)
      .max(MAX_RESULT_BYTES)
      .optional()
      .describe('most bytes to return (default and maximum 65536)'),
    stream: z.enum(['stdout', 'stderr']).optional().describe('default stdout'),
  }),
  async call({run, offset, limit_bytes, stream}, {home}) {
    const state = requireRun(home, resolveRunRef(home, run))
    const name = stream ?? 'stdout'
    const head = {run: state.meta.run, stream: name, status: state.meta.status}
    const summaryOf = (page: {offset: number; next_offset: number; size: number; eof: boolean}) =>
      `${name} bytes ${page.offset}-${page.next_offset} of ${page.size}${page.eof ? ' (eof)' : `; continue at offset ${page.next_offset}`}`
    // The page shrinks until text + document fit the cap (escaped characters cost more than a byte), measured
    // with the widest numbers a page can carry.
    const widest = {
      offset: Number.MAX_SAFE_INTEGER,
      next_offset: Number.MAX_SAFE_INTEGER,
      size: Number.MAX_SAFE_INTEGER,
    }
    const page = readLogPage(runFile(state.dir, name), offset ?? 0, limit_bytes ?? MAX_RESULT_BYTES, (text) =>
      fits(summaryOf({...widest, eof: false}), {...head, text, ...widest, eof: false}),
    )
    // The text content is the log itself under its one-line header (stream, byte range, eof).
    return {document: {...head, ...page}, summary: summaryOf(page), text: (doc: {text: string}) => doc.text}
  },
})

const recipesTool = defineTool({
  name: 'recipes',
  title: 'List Recipes',
  description: [
    'List the Recipes this server can launch (name, description, args), or describe one by name: its typed args with defaults, its command plan and its declared controls.',
    "Use it before run to learn the names and args. Recipes this server's policy does not allow are marked allowed: false.",
  ].join(' '),
  readOnly: true,
  input: () => ({name: z.string().min(1).optional().describe('a Recipe name to describe')}),
  async call({name}, {home, policy, recipesFlag}) {
    const doc = recipesDocument(home, {name, recipesFlag})
    if ('name' in doc)
      return {
        document: {...doc, allowed: recipeAllowed(policy, doc.name)},
        summary: `${doc.name}: ${doc.description || '(no description)'}`,
      }
    const recipes = doc.recipes.map((r) => ({...r, allowed: recipeAllowed(policy, r.name)}))
    const allowed = recipes.filter((r) => r.allowed && !r.error).map((r) => r.name)
    const shown = allowed.slice(0, 20).join(', ') + (allowed.length > 20 ? ', …' : '')
    return {
      document: {...doc, recipes},
      summary: `${allowed.length} allowed Recipe(s)${allowed.length ? `: ${shown}` : ''}`,
      bound: (d, s) => boundList(d, 'recipes', s, 'recipes {name} describes one Recipe'),
    }
  },
})

/** Every tool the server registers, in the order tools/list shows them. */
export const TOOLS: McpTool[] = [
  runTool,
  waitTool,
  inspectTool,
  logsTool,
  controlTool,
  recipesTool,
  lockTool,
  sendTool,
  rerunTool,
  closeTool,
] as unknown as McpTool[]
