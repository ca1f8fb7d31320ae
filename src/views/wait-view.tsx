/**
 * `actors wait` on a TTY: Runs that finished while waiting, once each into
 * scrollback (<Static>); the pending ones live with ticking durations; at the
 * end, the completion card, also into scrollback.
 */
import {Box, Static, Text} from 'ink'
import type {CardModel} from '../lib/view-state/card-model.js'
import type {RunSummary} from '../lib/runs/summary.js'
import {displayDuration, statusStyle, type Clock} from '../lib/view-state/run-rows.js'
import {CompletionCard} from './completion-card.js'

export type WaitItem = {kind: 'finished'; run: RunSummary} | {kind: 'card'; card: CardModel}

export function RunLine({run, clock}: {run: RunSummary; clock: Clock}) {
  const style = statusStyle(run.status)
  return (
    <Text wrap="truncate">
      <Text color={style.color}>{style.glyph} </Text>
      {run.run}
      <Text color={style.color}> {run.status}</Text> {displayDuration(run, clock)}
    </Text>
  )
}

export interface WaitViewProps {
  items: WaitItem[]
  pending: RunSummary[]
  clock: Clock
  /** Pending rows beyond this are counted, not drawn. */
  maxPending: number
}

export function WaitView({items, pending, clock, maxPending}: WaitViewProps) {
  const shown = pending.slice(0, Math.max(1, maxPending))
  return (
    <>
      <Static items={items}>
        {(item, i) => (item.kind === 'card' ? <CompletionCard key={`card-${i}`} card={item.card} /> : <RunLine key={`${item.run.state_dir}-${i}`} run={item.run} clock={clock} />)}
      </Static>
      {pending.length ? (
        <Box flexDirection="column">
          <Text dimColor>
            waiting for {pending.length} {pending.length === 1 ? 'Run' : 'Runs'} · Ctrl-C stops waiting (Runs keep going)
          </Text>
          {shown.map((run) => (
            <RunLine key={run.state_dir} run={run} clock={clock} />
          ))}
          {pending.length > shown.length ? <Text dimColor>… {pending.length - shown.length} more</Text> : null}
        </Box>
      ) : null}
    </>
  )
}
