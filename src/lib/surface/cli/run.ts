/** `actors run`: launch a Recipe or an ad-hoc command as a supervised Run. */
import {EXIT, usageError} from '../../base/platform/errors.js'
import {followRun} from '../present/follow.js'
import {generationNote, launchFailedNote, plainLaunched, plainLaunchFailed, waitingNote} from '../present/launch.js'
import {documentResult, type CommandResult} from '../present/result.js'
import {waitResult} from '../present/wait.js'
import type {LaunchResult} from '../../services/launch/launch.js'
import {callerLineage, treeOwner} from '../../kernel/runs/lineage.js'
import {
  findLaunchRecipe,
  launchOverrides,
  launchPrepared,
  prepareAdHoc,
  prepareRecipe,
  type PreparedLaunch,
} from '../../services/launch/run-launcher.js'
import {resolveHome} from '../../base/platform/home.js'
import {defineCommand} from './definition.js'
import {finishHandOvers, useSupervisionHost} from '../../kernel/executors/index.js'

export const runCommand = defineCommand({
  id: 'run',
  summary: 'Launch a Recipe (or an ad-hoc command after --) as a supervised Run',
  description:
    'Returns once the Run is durable and started (or queued): {run, run_instance_id, state_dir, status, pid}.',
  examples: [
    '<%= config.bin %> run demo',
    '<%= config.bin %> run hello name=world --json | jq -r .state_dir',
    '<%= config.bin %> run --name build -- make -j2',
    '<%= config.bin %> run --fork=2 reviewer   # inside a Run: the child starts with its last 2 inbox messages',
  ],
  strict: false,
  args: {recipe: {description: 'Recipe name (or path), followed by NAME=VALUE arguments'}},
  flags: {
    name: {type: 'string', description: 'Run id (letters, digits, _ . -); default: generated, PARENT.N inside a Run'},
    cwd: {type: 'string', description: 'working directory of the command'},
    timeout: {type: 'string', description: 'end the Run after this long (500ms, 30s, 5m, 1h)'},
    retry: {type: 'integer', description: 'total attempts when the command fails', min: 1, max: 100},
    silent: {type: 'boolean', description: 'never report this Run in a completion batch'},
    'max-parallel': {
      type: 'integer',
      description: 'children of this Run running at once (more wait as queued)',
      min: 1,
    },
    'budget-tokens': {type: 'integer', description: 'token budget for the whole tree rooted here', min: 1},
    recipes: {type: 'string', description: 'extra Recipe root searched first'},
    wait: {type: 'boolean', description: 'block until the Run ends, then print its completion batch'},
    follow: {type: 'boolean', description: "stream the Run's output while it runs"},
    on: {
      type: 'string',
      description:
        "where the supervisor runs: local or slurm (default: the Recipe's executor, else $ACTORS_EXECUTOR, else local)",
    },
    inbox: {
      type: 'string',
      description: "stdin or file: let `actors send` steer this Run (as a Recipe's inbox field does)",
    },
    memory: {type: 'string', description: 'memory limit of the whole Run (512M, 2G); needs cgroup containment'},
    cpus: {
      type: 'string',
      description: 'CPU limit of the whole Run (1.5 = one and a half CPUs); needs cgroup containment',
    },
    pids: {type: 'integer', description: 'most processes the Run may have at once; needs cgroup containment', min: 1},
    fork: {
      type: 'string',
      description:
        "inside a Run: the child's inbox starts with the Run's last N inbox messages (--fork alone: all); written --fork or --fork=N",
    },
  },
  normalizeArgv: normalizeForkArgv,

  async run({args, argv, passthrough, flags}) {
    const home = resolveHome(flags.home)
    // `run -- COMMAND`: the command is everything after `--` (a Recipe name, if any, comes before it).
    const adHoc = passthrough !== undefined && argv.length === passthrough.length
    let prepared: PreparedLaunch
    if (adHoc) {
      prepared = prepareAdHoc(passthrough)
    } else {
      if (args.recipe === undefined)
        throw usageError(
          'missing Recipe name',
          'actors run RECIPE [NAME=VALUE ...] or actors run -- COMMAND [ARG ...]; list Recipes with `actors recipes`',
        )
      prepared = prepareRecipe(findLaunchRecipe(home, args.recipe, flags.recipes), argv.slice(1))
    }
    // The Run goes to the state root's host (unless ACTORS_SUPERVISION=run), which answers once its command started.
    useSupervisionHost(home)
    const launched = launchPrepared(home, prepared, launchOverrides(flags))
    const hosted = (await finishHandOvers()).get(launched.state_dir)
    return afterLaunch(home, hosted === undefined ? launched : {...launched, pid: hosted}, flags)
  },
})

/**
 * `--fork[=N]` takes its count only after "=": a bare `--fork` (before `--`)
 * becomes `--fork=all` for both parsers, and `--fork 3` is refused rather than
 * read as a Recipe named 3.
 */
export function normalizeForkArgv(tokens: string[]): string[] {
  const end = tokens.indexOf('--')
  return tokens.map((token, i) => {
    if (token !== '--fork' || (end !== -1 && i > end)) return token
    const next = tokens[i + 1]
    if (next !== undefined && /^\d+$/.test(next) && (end === -1 || i + 1 < end))
      throw usageError(
        `--fork takes its count after "=": --fork ${next} is ambiguous`,
        `write --fork=${next} (or put a Recipe named ${next} before --fork)`,
      )
    return '--fork=all'
  })
}

/** The launch as the result, or following or waiting for the Run when asked. */
function afterLaunch(home: string, launched: LaunchResult, flags: {wait: boolean; follow: boolean}): CommandResult {
  // The Run exists but never started (Slurm refused the job): say why, exit 1.
  if (launched.error !== undefined)
    return documentResult(launched, plainLaunchFailed, {notes: launchFailedNote(launched), exitCode: EXIT.failed})
  // Interrupting the follow view stops following only; the Run keeps going.
  if (flags.follow) return followRun(launched.state_dir, {streams: ['stdout', 'stderr'], fromStart: true, launched})
  const reuse = generationNote(launched)
  if (flags.wait) {
    // The same completion batch as `actors wait RUN`: printed once, then marked reported for the owner.
    const lineage = callerLineage(home)
    // Inside a Run, the batch is credited to it like any wait it makes (its own row then shows the Run).
    const request = {
      home,
      owner: treeOwner(home, lineage),
      ids: [launched.run],
      any: false,
      collector: lineage.parent,
      untilEnd: true,
    }
    return waitResult(request, {extra: {launched}, note: reuse + waitingNote(launched)})
  }
  return documentResult(launched, plainLaunched, reuse ? {notes: reuse} : undefined)
}
