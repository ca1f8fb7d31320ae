/** `actors inspect`: the Run table, one Run in detail, or the Run tree (live with --watch). */
import {resolveHome} from '../../base/platform/home.js'
import {defineCommand} from './definition.js'
import {parseDuration} from '../../base/platform/duration.js'
import {
  inspectRun,
  listRunSummaries,
  printedListing,
  parseStatusFilter,
  type ListingFilter,
} from '../../kernel/history/inspect.js'
import {buildForest, type Forest} from '../../kernel/history/forest.js'
import {filterForest} from '../../services/tree/filter-forest.js'
import {usageError} from '../../base/platform/errors.js'
import {listGenerations} from '../../kernel/runs/generation-list.js'
import {
  everyRunResult,
  plainDetail,
  plainForest,
  plainGenerations,
  plainListing,
  watchForest,
  watchListing,
} from '../present/inspect.js'
import {documentResult, type LiveResult} from '../present/result.js'

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
    generations: {
      type: 'boolean',
      description: "list RUN's generations (generation, instance, status, started, ended, exit code)",
    },
    status: {type: 'string', description: 'only Runs with these statuses (comma-separated)'},
    limit: {type: 'integer', description: 'the N most recent Runs by start time (live Runs are always shown)', min: 1},
    since: {type: 'string', description: 'only Runs created within this long (30s, 5m, 1h, 2d)'},
    recipe: {type: 'string', description: 'only Runs of this Recipe'},
    owner: {type: 'string', description: 'only Runs of this owner'},
    root: {type: 'string', description: 'only this Run (id or state dir) and its descendants'},
    tree: {type: 'boolean', description: 'show the Run forest (or the subtree of RUN)'},
    watch: {type: 'boolean', description: 'live view until interrupted'},
  },

  async run({args, flags}) {
    const home = resolveHome(flags.home)
    if (flags.generations) {
      if (!args.run) throw usageError('--generations needs a RUN', 'actors inspect RUN --generations')
      return documentResult(listGenerations(home, args.run), plainGenerations)
    }
    if (flags.watch) return watch(home, flags, args.run)
    if (flags.tree) return treeResult(home, args.run, flags)
    if (args.run) return documentResult(inspectRun(home, args.run), plainDetail)
    const filter = listingFilter(flags)
    // Every Run, unfiltered: under --json printed from cached text (the common, big listing).
    if (Object.values(filter).every((value) => value === undefined))
      return everyRunResult(
        (print) => printedListing(home, print),
        () => listRunSummaries(home, filter),
      )
    return documentResult(listRunSummaries(home, filter), (listing, to) =>
      plainListing(listing, to, filterWords(flags)),
    )
  },
})

/** `--tree`: the forest (of RUN or --root), narrowed to the Runs the other filters match. */
function treeResult(home: string, ref: string | undefined, flags: ListingFlags) {
  return documentResult(filteredForest(home, ref, flags), (doc, to) => plainForest(doc, to, filterWords(flags)))
}

/** The forest of RUN or --root (else every tree), narrowed to the Runs the filters match (src/lib/services/tree/filter-forest.ts). */
function filteredForest(home: string, ref: string | undefined, flags: ListingFlags): Forest {
  const filter = listingFilter(flags)
  const forest = buildForest(home, ref ?? flags.root)
  const narrowed =
    filter.statuses ||
    filter.limit !== undefined ||
    filter.sinceMs !== undefined ||
    filter.recipe !== undefined ||
    filter.owner !== undefined
  return narrowed
    ? filterForest(
        forest,
        new Set(listRunSummaries(home, {...filter, root: ref ?? flags.root}).runs.map((r) => r.state_dir)),
      )
    : forest
}

/** The filter flags as given (`--status running --recipe build`), for "no Runs match ...". */
function filterWords(flags: ListingFlags): string {
  const given = (['status', 'limit', 'since', 'recipe', 'owner', 'root'] as const).filter(
    (name) => flags[name] !== undefined,
  )
  return given.map((name) => `--${name} ${flags[name]}`).join(' ')
}

/** `--watch` (`--tree --watch`, or `RUN --watch` for its subtree): the forest or the listing, live. */
function watch(home: string, flags: ListingFlags & {tree: boolean}, ref: string | undefined): LiveResult {
  // The same filters as the table: every read narrows the forest again.
  if (flags.tree || ref !== undefined)
    return watchForest(home, ref ?? flags.root, () => filteredForest(home, ref, flags))
  const filter = listingFilter(flags)
  return watchListing(home, () => listRunSummaries(home, filter))
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
