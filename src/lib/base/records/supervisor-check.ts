/** What an executor answers about a live Run's supervisor (see index.ts). */
import type {LiveStatus, TerminalStatus} from './run.js'

export type SupervisorCheck =
  /** Still live; `status`, when set, is what the executor says the Run is now (a pending job is queued, a suspended one paused). */
  | {alive: true; status?: LiveStatus}
  /** Gone without a result: settle the Run with this status, reason and extra result fields. */
  | {alive: false; status: TerminalStatus; reason: string; details?: Record<string, unknown>}
