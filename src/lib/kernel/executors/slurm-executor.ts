/**
 * The Slurm executor (SPEC: Executors; docs/slurm.md): the supervisor runs as
 * a batch job on a node, submitted with sbatch (slurm-submit.ts), checked
 * through Slurm itself (slurm.ts), controlled from outside the job through a
 * job step or Slurm's own commands (slurm-control.ts; pause and resume of
 * the whole job, confirmed by Slurm, in slurm-suspend.ts), and, on the node,
 * told by Slurm why it is being ended (on-node.ts); on the job's node the
 * kernel's own verbs act (local-verbs.ts). File notifications do
 * not cross machines, so readers poll its Runs.
 */
import {jobWhere, type Executor} from './executor.js'
import type {EndMode, RuntimeActionResult} from '../signals/runtime-actions.js'
import {slurmJobEnding, supervisorStartFields, termIsJobTimeLimit} from './on-node.js'
import {controlSlurmRun, needsSlurmControl} from './slurm-control.js'
import {requireSlurmClient, submitSlurmRun} from './slurm-submit.js'
import {checkSlurmSupervisor, isSlurmRun, REMOTE_POLL_MS, slurmJobId, slurmQueuedWhy} from './slurm.js'
import {localVerbs} from './local-verbs.js'
import {slurmOptionsSchema} from './slurm-options.js'
import {readRunState, type RunState} from '../runs/store.js'
import {liveRunUsage} from '../containment/live-usage.js'

export const slurmExecutor: Executor = {
  kind: 'slurm',
  recipeOptions: slurmOptionsSchema,
  choose: (recipe) => recipe ?? {kind: 'slurm'},
  preflight: () => requireSlurmClient(),
  startsQueued: true,
  start: (home, dir) => submitSlurmRun(home, dir),
  handedOver: (meta) => slurmJobId(meta) !== undefined,
  check: (meta, dir) => (isSlurmRun(meta) ? checkSlurmSupervisor(meta, dir) : {alive: true}),
  // The job is the unit: Slurm ends what is left of it.
  endLost: () => ({}),
  // Read as a local Run's unit: on the job's node it is found; elsewhere nothing of it is, and none is shown.
  usage: liveRunUsage,
  pollMs: () => REMOTE_POLL_MS,
  relay: (home, state, action, value) =>
    needsSlurmControl(state.meta) ? controlSlurmRun(home, state, action, value) : undefined,
  // Reached on the job's node (inside the job step a relay runs), or for a Run not yet or no longer in a job.
  ...localVerbs,
  // A tree's cascade ends a Slurm descendant inside its job (or through Slurm), from wherever the cascade runs.
  end: async (home, dir, mode, options) => {
    const state = readRunState(dir)
    // A tree's shared grace (tree/cascade.ts) leaves Slurm Runs out: each is stopped in its turn with a grace of
    // its own, since on its node the stopping step runs inside its job, which ends with it.
    const slurmRun = state !== undefined && isSlurmRun(state.meta)
    if (slurmRun && options?.signalOnly) return notEnded(state, mode)
    if (!state || !needsSlurmControl(state.meta)) return localVerbs.end(home, dir, mode, slurmRun ? {} : options)
    // The node's `actors control` answers with the document a local end returns (plus how it got there).
    return (await controlSlurmRun(home, state, mode, undefined)) as unknown as RuntimeActionResult
  },
  describe: (run) => jobWhere('slurm', run),
  queuedWhy: (run) => slurmQueuedWhy(run.job_id),
  supervisor: {
    startFields: supervisorStartFields,
    termIsTimeLimit: termIsJobTimeLimit,
    ending: slurmJobEnding,
  },
}

/** What a Slurm Run's end reports when it was not asked for yet. */
function notEnded(state: RunState, mode: EndMode): RuntimeActionResult {
  const {run, run_instance_id} = state.meta
  return {action: mode, run, run_instance_id, status: state.meta.status, signalled: [], changed: false}
}
