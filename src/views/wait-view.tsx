/**
 * `actors wait` on a TTY: Runs that finished while waiting, once each into
 * scrollback (<Static>); the pending ones live with ticking durations; at the
 * end, the completion card, also into scrollback.
 */
import {Box, Static, Text} from 'ink'
import type {CardModel} from '../lib/services/view-state/card-model.js'
import type {RunSummary} from '../lib/kernel/runs/summary.js'
import {displayDuration, statusStyle, type Clock} from '../lib/services/view-state/run-rows.js'
import {CompletionCard} from './completion-card.js'
import {inertText} from '../lib/base/platform/text.js'
import {AttentionLine} from './attention-line.js'
import type {AttentionNote} from '../lib/services/view-state/attention-feed.js'
import type {Nested} from '../lib/services/view-state/run-nesting.js'

export type WaitItem =
  | {kind: 'finished'; run: RunSummary}
  | {kind: 'attention'; note: AttentionNote}
  | {kind: 'card'; card: CardModel}

export function RunLine({
  run,
  clock,
  prefix = '',
  why,
}: {
  run: RunSummary
  clock: Clock
  prefix?: string
  why?: string
}) {
  const style = statusStyle(run.status)
  return (
    <Text wrap="truncate">
      <Text dimColor>{prefix}</Text>
      <Text color={style.color}>{style.glyph} </Text>
      {inertText(run.run)}
      <Text color={style.color}> {inertText(run.status)}</Text> {displayDuration(run, clock)}
      {why ? <Text dimColor> · {inertText(why)}</Text> : null}
    </Text>
  )
}

export interface WaitViewProps {
  items: WaitItem[]
  pending: RunSummary[]
  clock: Clock
  /** Pending rows beyond this are counted, not drawn. */
  maxPending: number
  /** The pending Runs as a tree (drawn instead of `pending` when given). */
  pendingTree?: Nested<RunSummary>[]
  /** The count shown: trees still waited for (default: the pending Runs). */
  waitingFor?: number
  /** Why each pending Run (by state dir) has not got further. */
  why?: Map<string, string>
}

function StaticItem({item, clock}: {item: WaitItem; clock: Clock}) {
  if (item.kind === 'card') return <CompletionCard card={item.card} />
  if (item.kind === 'attention') return <AttentionLine note={item.note} />
  return <RunLine run={item.run} clock={clock} />
}

export function WaitView({items, pending, clock, maxPending, pendingTree, waitingFor, why}: WaitViewProps) {
  const tree = pendingTree ?? pending.map((item) => ({item, prefix: '', depth: 0}))
  const shown = tree.slice(0, Math.max(1, maxPending))
  const count = waitingFor ?? pending.length
  const inside = pending.length - count
  return (
    <>
      <Static items={items}>
        {(item, i) => (
          <StaticItem
            key={item.kind === 'attention' ? item.note.event_id : `${item.kind}-${i}`}
            item={item}
            clock={clock}
          />
        )}
      </Static>
      {pending.length ? (
        <Box flexDirection="column">
          <Text dimColor>
            waiting for {count} {count === 1 ? 'Run' : 'Runs'}
            {inside > 0 ? ` (${inside} more inside ${count === 1 ? 'it' : 'them'})` : ''} · Ctrl-C stops waiting (Runs
            keep going)
          </Text>
          {shown.map(({item: run, prefix}) => (
            <RunLine key={run.state_dir} run={run} clock={clock} prefix={prefix} why={why?.get(run.state_dir)} />
          ))}
          {pending.length > shown.length ? <Text dimColor>… {pending.length - shown.length} more</Text> : null}
        </Box>
      ) : null}
    </>
  )
}
