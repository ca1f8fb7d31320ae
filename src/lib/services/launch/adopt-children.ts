/**
 * Adoption by a new generation (SPEC: Generations and steering): when a Run
 * id starts generation n+1, its earlier generations' children that are still
 * live now count as n+1's. Their `parent.run_instance_id` is re-fenced to the
 * new instance (so the max-parallel queue, the stop cascade and the new
 * generation's `wait` find them through children.jsonl as usual) and a
 * `runtime.adopted` event lands in both Traces.
 */
import {withLockSync} from '../../base/platform/file-lock.js'
import {runDir} from '../../base/platform/home.js'
import {runFile, updateRunMeta} from '../../kernel/runs/store.js'
import {isTerminal, type RunMeta} from '../../base/records/run.js'
import {readJsonLines} from '../../base/platform/state-files.js'
import {appendTraceEvent} from '../../kernel/runs/trace.js'
import {childrenLock, type ChildRecord} from '../../kernel/runs/children.js'
import {generationOf} from '../../base/records/generation-layout.js'
import {traceChildStarted} from '../../kernel/runs/child-events.js'

/** Append a kernel event to a Run's Trace; a Trace that cannot be written never blocks adoption. */
export function traceAdoption(
  dir: string,
  meta: Pick<RunMeta, 'run_instance_id'>,
  summary: string,
  data: Record<string, unknown>,
): void {
  try {
    appendTraceEvent(dir, {kind: 'runtime.adopted', summary, data, run_instance_id: meta.run_instance_id})
  } catch {}
}

/** Re-fence the live children of `parent`'s earlier generations to `parent` (its current instance). Never throws. */
export function adoptEarlierChildren(home: string, parentDir: string, parent: RunMeta): string[] {
  const adopted: string[] = []
  try {
    withLockSync(childrenLock(parentDir), () => {
      const {records} = readJsonLines<ChildRecord>(runFile(parentDir, 'children'))
      const seen = new Set<string>()
      for (const record of records.reverse()) {
        if (typeof record.run !== 'string' || seen.has(record.run)) continue
        seen.add(record.run)
        let childDir: string
        try {
          childDir = runDir(home, record.run)
        } catch {
          continue
        }
        let from: string | undefined
        const changed = updateRunMeta(childDir, (child) => {
          const ref = child.parent
          if (
            isTerminal(child.status) ||
            !ref ||
            ref.run !== parent.run ||
            ref.run_instance_id === parent.run_instance_id
          )
            return undefined
          if (child.run_instance_id !== record.run_instance_id) return undefined
          from = ref.run_instance_id
          return {...child, parent: {...ref, run_instance_id: parent.run_instance_id}, adopted_from: from}
        })
        if (!changed || from === undefined) continue
        traceAdoption(childDir, changed, `adopted by ${parent.run} generation ${generationOf(parent)}`, {
          parent: parent.run,
          parent_run_instance_id: parent.run_instance_id,
          from,
        })
        traceAdoption(parentDir, parent, `adopted ${changed.run} from an earlier generation`, {
          child: changed.run,
          child_run_instance_id: changed.run_instance_id,
          from,
        })
        traceChildStarted(parentDir, changed, {adopted: true})
        adopted.push(changed.run)
      }
    })
  } catch {}
  return adopted
}
