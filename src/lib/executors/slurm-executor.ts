/**
 * The Slurm executor (SPEC: Executors; docs/slurm.md): the supervisor runs as
 * a batch job on a node, submitted with sbatch (slurm-submit.ts), checked
 * through Slurm itself (slurm.ts), controlled from outside the job through a
 * job step or Slurm's own commands (slurm-control.ts; pause and resume of
 * the whole job, confirmed by Slurm, in slurm-suspend.ts), and, on the node,
 * told by Slurm why it is being ended (on-node.ts). File notifications do
 * not cross machines, so readers poll its Runs.
 */
import type {Executor} from './executor.js'
import {slurmJobEnding, supervisorStartFields, termIsJobTimeLimit} from './on-node.js'
import {controlSlurmRun, needsSlurmControl} from './slurm-control.js'
import {requireSlurmClient, submitSlurmRun} from './slurm-submit.js'
import {checkSlurmSupervisor, isSlurmRun, REMOTE_POLL_MS, slurmJobId} from './slurm.js'

export const slurmExecutor: Executor = {
  kind: 'slurm',
  preflight: () => requireSlurmClient(),
  startsQueued: true,
  start: (home, dir) => submitSlurmRun(home, dir),
  handedOver: (meta) => slurmJobId(meta) !== undefined,
  check: (meta) => (isSlurmRun(meta) ? checkSlurmSupervisor(meta) : {alive: true}),
  // The job is the unit: Slurm ends what is left of it.
  endLost: () => ({}),
  pollMs: () => REMOTE_POLL_MS,
  control: (home, state, action, value) => (needsSlurmControl(state.meta) ? controlSlurmRun(home, state, action, value) : undefined),
  supervisor: {
    startFields: supervisorStartFields,
    termIsTimeLimit: termIsJobTimeLimit,
    ending: slurmJobEnding,
  },
}
