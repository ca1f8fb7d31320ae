/** The plain face of `actors prune`: what was deleted on stdout, what was kept and why on stderr. */
import type {PruneReport} from '../../kernel/history/prune.js'
import {inertText} from '../../base/platform/text.js'
import type {TextSinks} from './result.js'

export function plainPruned(report: PruneReport, to: TextSinks): void {
  for (const id of report.pruned) to.out(`${id}\n`)
  for (const g of report.pruned_generations ?? []) to.out(`${g.generations.map((n) => `${g.run}@${n}`).join('\n')}\n`)
  for (const s of report.skipped) to.note(`actors: kept ${inertText(s.run)}: ${inertText(s.reason)}\n`)
  to.note(`actors: pruned ${report.pruned.length} Run(s)\n`)
}
