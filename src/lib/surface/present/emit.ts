/** The plain faces of `actors emit`: the event id on stdout, or the usage total on stderr. */
import type {TraceEvent} from '../../kernel/runs/trace.js'
import type {TextSinks} from './result.js'

/** `emit KIND`: the new event's id. */
export function plainEmitted(doc: {event: TraceEvent}, to: TextSinks): void {
  to.out(`${doc.event.id}\n`)
}

/** `emit usage`: the Run's total so far. */
export function plainUsage(doc: {run: string; usage: {tokens: number}}, to: TextSinks): void {
  to.note(`actors: ${doc.run} usage now ${doc.usage.tokens} tokens\n`)
}
