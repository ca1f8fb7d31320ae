/**
 * The kernel's verbs on a Run whose processes are on this machine (SPEC:
 * Control, Containment): they act on the Run's containment unit through the
 * signals layer (signals/runtime-actions.ts, signals/interrupt.ts). The local
 * executor is made of them, and so is a Slurm Run's control on its own node
 * (the job step a relayed `actors control` runs in).
 */
import {pauseOrResumeRun, verifyCommandProcesses} from '../signals/runtime-actions.js'
import {endLeftovers, endRun} from '../signals/end-run.js'
import {interruptRun} from '../signals/interrupt.js'
import {pauseOrResumeLeftovers} from '../signals/pause-leftovers.js'
import type {Executor} from './executor.js'

export const localVerbs: Pick<
  Executor,
  'pauseOrResume' | 'checkEnd' | 'end' | 'endLeftovers' | 'pauseLeftovers' | 'interrupt'
> = {
  pauseOrResume: (home, state, action) => pauseOrResumeRun(home, state.dir, action),
  // The identity guard: a recycled pid refuses the whole action before any descendant is ended.
  checkEnd: (meta) => void verifyCommandProcesses(meta),
  end: endRun,
  endLeftovers,
  pauseLeftovers: pauseOrResumeLeftovers,
  interrupt: interruptRun,
}
