/**
 * Pause and resume of a Run whose record says it ended while its own
 * processes run: it wrote `status: done` into its run.json (or a neighbour
 * did), or its supervisor vanished and it was settled `exited`. Pause is no
 * end, so what the record says must not shield the processes from it, as it
 * does not from stop and kill (end-run.ts endLeftovers): `pause` refused
 * with "... is done" while the Run ran on.
 */
import {notifyStateChange} from '../../base/bell/notify.js'
import {signalPids} from '../../base/platform/process-tree.js'
import {supervisorExclusion} from '../../base/records/supervisor-args.js'
import {isTerminal} from '../../base/records/run.js'
import {livePidsOfEnded} from '../containment/unit-facts.js'
import {readRunMetaRaw, readRunResult} from '../runs/store.js'
import {actionResult, trace, type RuntimeActionResult} from './runtime-actions.js'

/** Rounds of a pause: a process forked between the listing and the stop is caught by the next one. */
const PAUSE_ROUNDS = 3

/**
 * SIGSTOP (pause) or SIGCONT (resume) the live processes of an ended Run,
 * found as `wait`'s proof finds them (its supervisor, the processes carrying
 * its state dir, its proven cgroup), its proven supervisor spared: it records
 * the real end when the command ends. The recorded status stays what it is;
 * the trace says `pause_leftovers` / `resume_leftovers`. Undefined when
 * nothing of the Run is alive (the caller refuses: the Run is finished).
 */
export function pauseOrResumeLeftovers(
  home: string,
  dir: string,
  action: 'pause' | 'resume',
): RuntimeActionResult | undefined {
  const meta = readRunMetaRaw(dir)
  const ended = meta && (isTerminal(meta.status) ? meta.status : readRunResult(dir, meta)?.status)
  if (!meta || !ended) return undefined
  const spared = new Set(supervisorExclusion(meta, dir))
  const live = () => livePidsOfEnded(dir, meta).filter((pid) => !spared.has(pid))
  const signalled = new Set<number>()
  for (let round = 0; round < (action === 'pause' ? PAUSE_ROUNDS : 1); round++) {
    const fresh = live().filter((pid) => !signalled.has(pid))
    if (fresh.length === 0) break
    signalPids(fresh, action === 'pause' ? 'SIGSTOP' : 'SIGCONT')
    for (const pid of fresh) signalled.add(pid)
  }
  if (signalled.size === 0) return undefined
  const pids = [...signalled]
  trace(dir, meta, `${action}_leftovers`, {pids})
  notifyStateChange(home)
  return actionResult(action, meta, {status: ended, signalled: pids, changed: false})
}
