/** The plain face of `actors control`: a runtime action's effect, a Run's status, or a service's reply. */
import type {ControlOutcome, StatusResult} from '../../services/control/control.js'
import {formatClock} from '../../services/music/status.js'
import type {TextSinks} from './result.js'
import {inertText} from '../../base/platform/text.js'

/** What a control did: the Run and its status on stdout, what was signalled on stderr; a status; or a service's reply. */
export function plainControlOutcome(outcome: ControlOutcome, to: TextSinks): void {
  // A service's reply and a Run's own records are the Run's text: inert on the terminal.
  to.out(inertText(formatOutcome(outcome, to), {multiline: true}))
}

function formatOutcome(outcome: ControlOutcome, to: TextSinks): string {
  if ('standalone' in outcome) return formatReply(outcome)
  if ('generation' in outcome) return formatStatus(outcome)
  if (outcome.handled_by === 'service') return formatReply(outcome.reply)
  if (outcome.action === 'interrupt') {
    to.note(
      `actors: SIGINT sent to ${outcome.signalled_groups.length} process group(s) of ${outcome.run}${outcome.fallback ? ` (kernel fallback: ${outcome.fallback})` : ''}\n`,
    )
    return `${outcome.run} ${outcome.status}\n`
  }
  const note = outcome.fallback ? ` (kernel fallback: ${outcome.fallback})` : ''
  if (outcome.action === 'pause' || outcome.action === 'resume') {
    to.note(
      `actors: ${outcome.action === 'pause' ? 'stopped' : 'continued'} ${outcome.signalled.length} process(es) of ${outcome.run}${note}\n`,
    )
  } else {
    to.note(
      `actors: ${outcome.action} sent to ${outcome.signalled.length} process(es) of ${outcome.run}${note}${outcome.settled ? '' : '; result not recorded yet'}\n`,
    )
  }
  return `${outcome.run} ${outcome.status}\n`
}

function formatStatus(s: StatusResult): string {
  const lines = [
    `run:         ${s.run}`,
    `status:      ${s.status}${s.ending ? ` (ending: ${s.ending.status})` : ''}`,
    `generation:  ${s.generation}`,
    `supervisor:  ${s.pid ?? '-'}${s.supervisor_alive ? '' : ' (not running)'}`,
    `processes:   ${s.pids.length ? s.pids.join(' ') : '-'}`,
    `actions:     ${s.actions.join(', ')}`,
  ]
  if (s.identity_mismatch.length)
    lines.push(`mismatch:    ${s.identity_mismatch.join(' ')} (pid reused; never signalled)`)
  if (s.endpoint) lines.push(`endpoint:    ${s.endpoint.path}${s.endpoint.current ? '' : ' (other generation)'}`)
  if (s.controls.pending) lines.push(`pending:     ${s.controls.pending} control(s)`)
  if (s.result)
    lines.push(
      `result:      exit ${s.result.exit_code ?? '-'}${s.result.signal ? ` signal ${s.result.signal}` : ''}${s.result.reason ? ` (${s.result.reason})` : ''}`,
    )
  // A playback service's own view, merged into the status (SPEC: Music).
  if (typeof s.state === 'string') lines.push(`playback:    ${formatPlayback(s)}`)
  if (s.service !== null) lines.push(`service:     ${JSON.stringify(s.service)}`)
  return lines.join('\n') + '\n'
}

/** A service's reply: a playback line when it carries playback status, else the reply as one JSON line. */
function formatReply(reply: Record<string, unknown>): string {
  const status = typeof reply.state === 'string' ? reply : (reply.status as Record<string, unknown> | undefined)
  return status && typeof status === 'object' && typeof status.state === 'string'
    ? `${formatPlayback(status)}\n`
    : JSON.stringify(reply) + '\n'
}

/** One line of playback status: state, position in the queue, track, time and volume. */
function formatPlayback(p: Record<string, unknown>): string {
  const where = typeof p.index === 'number' && typeof p.count === 'number' ? ` ${p.index + 1}/${p.count}` : ''
  const clock = (seconds: unknown) => formatClock(typeof seconds === 'number' ? seconds : null)
  const time =
    typeof p.position_seconds === 'number' ? `  ${clock(p.position_seconds)} / ${clock(p.duration_seconds)}` : ''
  // One line whatever the service says (a track name may hold a newline).
  return inertText(
    `${p.state}${where}${p.track ? `  ${p.track}` : ''}${time}${typeof p.volume === 'number' ? `  volume ${p.volume}` : ''}`,
  )
}
