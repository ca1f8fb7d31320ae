/** `actors inspect`: the Run table, one Run in detail, or the Run tree (live with --watch). */
import {importView} from '../esm-import.js'
import {resolveHome} from '../home.js'
import {defineCommand} from './definition.js'
import {formatDuration, parseDuration} from '../duration.js'
import {inspectRun, listRunSummaries, parseStatusFilter, type ListingFilter, type RunDetail} from '../inspect.js'
import {decideOutput, printableLine, type OutputMode} from '../output.js'
import {stdoutClosed} from '../output-guard.js'
import {tableRows, treeRows, type Clock, type Layout, type RunRow} from '../views/run-rows.js'
import {formatRunTable, watchRunsPlain, type WatchedListing} from '../views/runs-plain.js'
import {createStateStore, type StateStore} from '../views/runs-store.js'
import {buildForest} from '../tree/forest.js'
import {usageError} from '../errors.js'
import {listGenerations, type GenerationListing} from '../generations/list.js'
import {displayRunName} from '../generations/layout.js'
import {renderForest} from '../tree/render.js'

export const inspectCommand = defineCommand({
  id: 'inspect',
  summary: 'Show Runs: a table, one Run in detail, or the Run tree',
  examples: [
    '<%= config.bin %> inspect',
    '<%= config.bin %> inspect build-1 --json',
    '<%= config.bin %> inspect --status running,paused',
    '<%= config.bin %> inspect --limit 20 --since 1h --recipe build',
  ],
  args: {run: {description: 'Run id or state dir; RUN@N for its generation N'}},
  flags: {
    generations: {type: 'boolean', description: "list RUN's generations (generation, instance, status, started, ended, exit code)"},
    status: {type: 'string', description: 'only Runs with these statuses (comma-separated)'},
    limit: {type: 'integer', description: 'the N most recent Runs by start time (live Runs are always shown)', min: 1},
    since: {type: 'string', description: 'only Runs created within this long (30s, 5m, 1h, 2d)'},
    recipe: {type: 'string', description: 'only Runs of this Recipe'},
    owner: {type: 'string', description: 'only Runs of this owner'},
    root: {type: 'string', description: 'only this Run (id or state dir) and its descendants'},
    tree: {type: 'boolean', description: 'show the Run forest (or the subtree of RUN)'},
    watch: {type: 'boolean', description: 'live view until interrupted'},
  },

  async run({args, flags, json}) {
    const home = resolveHome(flags.home)
    if (flags.generations) {
      if (!args.run) throw usageError('--generations needs a RUN', 'actors inspect RUN --generations')
      const listing = listGenerations(home, args.run)
      if (!json) process.stdout.write(formatGenerations(listing))
      return listing
    }
    if (flags.watch) return watch(home, flags, args.run, json)
    if (flags.tree) {
      const forest = buildForest(home, args.run)
      if (!json) {
        process.stdout.write(renderForest(forest.forest))
        if (!forest.forest.length) process.stderr.write('no Runs yet; start one with `actors run demo`\n')
        for (const d of forest.damaged) process.stderr.write(`actors: skipped ${d.state_dir}: ${d.error}\n`)
      }
      return forest
    }
    if (args.run) {
      const detail = inspectRun(home, args.run)
      if (!json) process.stdout.write(formatDetail(detail))
      return detail
    }
    const listing = listRunSummaries(home, listingFilter(flags))
    if (!json) {
      process.stdout.write(formatRunTable(tableRows(listing), 'table', {now: Date.now(), readAt: Date.now()}))
      if (!listing.runs.length) process.stderr.write('no Runs yet; start one with `actors run demo`\n')
      for (const d of listing.damaged) process.stderr.write(`actors: skipped ${d.state_dir}: ${d.error}\n`)
    }
    return listing
  },
})

/**
 * `--watch` (`--tree --watch`, or `RUN --watch` for its subtree): the Ink
 * view on a TTY; otherwise the same text as without --watch, printed again
 * after every change (NDJSON snapshots under --json), until SIGINT or SIGTERM.
 */
async function watch(home: string, flags: ListingFlags & {tree: boolean}, ref: string | undefined, json: boolean): Promise<undefined> {
  const mode = decideOutput(json)
  if (flags.tree || ref !== undefined) {
    // The store reads once on creation: an unknown RUN fails fast there (exit 4), before any watching.
    await watchStore(mode, createStateStore(home, () => buildForest(home, ref), {tickMs: mode === 'ink' ? 1000 : 0}), {
      title: `actors · Run tree${ref ? ` of ${ref}` : ''} · ${home}`,
      layout: 'tree',
      toRows: treeRows,
      format: (forest) => renderForest(forest.forest),
    })
    return undefined
  }
  const filter = listingFilter(flags)
  await watchStore(mode, createStateStore(home, () => listRunSummaries(home, filter), {tickMs: mode === 'ink' ? 1000 : 0}), {
    title: `actors · Runs · ${home}`,
    layout: 'table',
    toRows: tableRows,
    format: (listing, clock) => formatRunTable(tableRows(listing), 'table', clock),
  })
  return undefined
}

interface ListingFlags {
  status?: string
  limit?: number
  since?: string
  recipe?: string
  owner?: string
  root?: string
}

/** The listing filter of the table flags (checked before anything is read). */
function listingFilter(flags: ListingFlags): ListingFilter {
  return {
    statuses: parseStatusFilter(flags.status),
    limit: flags.limit,
    sinceMs: flags.since === undefined ? undefined : parseDuration(flags.since, '--since'),
    recipe: flags.recipe,
    owner: flags.owner,
    root: flags.root,
  }
}

async function watchStore<T extends WatchedListing>(
  mode: OutputMode,
  store: StateStore<T>,
  view: {title: string; layout: Layout; toRows: (data: T) => RunRow[]; format: (data: T, clock: Clock) => string},
): Promise<void> {
  try {
    if (mode === 'ink') {
      const {showRunsLive} = await importView<typeof import('../../views/runs-live.js')>('runs-live')
      await showRunsLive(store, view)
      return
    }
    const stop = new AbortController()
    const end = () => stop.abort()
    process.once('SIGINT', end)
    process.once('SIGTERM', end)
    // A reader that went away (`| head`) ends the watch too.
    stdoutClosed.addEventListener('abort', end, {once: true})
    await watchRunsPlain(store, {json: mode === 'json', toRows: view.toRows, format: view.format, write: (text) => process.stdout.write(text), signal: stop.signal})
  } finally {
    store.close()
  }
}

function formatGenerations(listing: GenerationListing): string {
  const widths = [3, 36, 9, 24, 24]
  const line = (cells: string[]) => cells.map((c, i) => (i < widths.length ? c.padEnd(widths[i]) : c)).join('  ').trimEnd()
  const lines = [line(['GEN', 'INSTANCE', 'STATUS', 'STARTED', 'ENDED', 'EXIT'])]
  for (const g of listing.generations) {
    lines.push(line([String(g.generation), g.run_instance_id, g.status, g.started_at ?? '-', g.ended_at ?? '-', `${g.exit_code ?? '-'}${g.current ? '  (current)' : ''}`]))
  }
  return lines.join('\n') + '\n'
}

function formatDetail(d: RunDetail): string {
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
  if (d.executor && d.executor !== 'local') lines.push(`executor:   ${d.executor}${d.job_id ? ` job ${d.job_id}` : ''}${d.node ? ` on ${d.node}` : ''}`)
  if (d.controls.length) lines.push(`controls:   ${d.controls.join(', ')}`)
  for (const a of d.artifacts) lines.push(`artifact:   ${a.name} ${a.path} ${a.bytes ?? 'missing'} bytes ${a.sha256 ?? ''}`.trimEnd())
  if (d.trace.length) {
    lines.push('trace:')
    for (const e of d.trace) lines.push(`  ${e.ts.slice(11, 23)} ${e.kind}${e.summary ? `  ${printableLine(e.summary)}` : ''}`)
  }
  return lines.join('\n') + '\n'
}
