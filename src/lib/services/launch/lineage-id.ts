/**
 * Lineage ids (SPEC: Trees, owners and limits): a child launched inside a Run
 * without --name is `PARENT.N`, so an id says where a Run sits in its tree
 * (`review.2.1` is the first child of the second child of `review`). N counts
 * the parent's children from 1 across its generations: their journal
 * (children.jsonl) stays with the Run id when a next generation starts.
 */
import {isPlainName} from '../../base/platform/home.js'
import {readJsonLines} from '../../base/platform/state-files.js'
import type {ParentRef} from '../../base/records/run.js'
import type {ChildRecord} from '../../kernel/runs/children.js'
import {runFile} from '../../kernel/runs/store.js'

/**
 * The id of `parent`'s next unnamed child: `PARENT.N`, N one past the
 * children its journal records and past `after` (the N of an id found taken,
 * which moves on to the next N). The journal is read without the children
 * lock: two siblings launched at once may pick the same N, and the one whose
 * claim of the state dir loses moves on. Undefined when the id would be longer
 * than a Run id may be (a deep tree of long ids): the caller makes one from
 * the hint then.
 */
export function nextLineageId(parent: ParentRef, after = 0): {id: string; n: number} | undefined {
  let children = 0
  try {
    const {records} = readJsonLines<ChildRecord>(runFile(parent.state_dir, 'children'))
    // A child launched again (its next generation) is journaled again: each id counts once.
    children = new Set(records.map((record) => record.run).filter((run) => typeof run === 'string')).size
  } catch {
    // An unreadable journal (the launch itself refuses a linked one): the taken ids still move N on.
  }
  const n = Math.max(children, after) + 1
  const id = `${parent.run}.${n}`
  return isPlainName(id) ? {id, n} : undefined
}
