/** `actors control`: runtime actions on a Run, or one of the actions its Recipe declares. */
import {controlRun, type ControlOutcome, type StatusResult} from '../control/control.js'
import {resolveHome} from '../home.js'
import {formatClock} from '../music/status.js'
import {SERVICE_KINDS} from '../service-kinds.js'
import {defineCommand} from './definition.js'

export const controlCommand = defineCommand({
  id: 'control',
  summary: 'Control a Run: pause, resume, stop, kill, interrupt, status, or one of its declared actions',
  description: [
    "pause/resume send SIGSTOP/SIGCONT to the Run's processes; stop sends SIGTERM to the whole tree and SIGKILL after kill_grace (result cancelled);",
    "kill sends SIGKILL at once (result killed); interrupt sends SIGINT to the command's process group (the Run stays live);",
    "status prints the kernel's view merged with the service's reply.",
    "Other actions must be declared by the Recipe (`control:`) and are delivered to the Run's service.",
  ].join(' '),
  examples: [
    '<%= config.bin %> control build-1 pause',
    '<%= config.bin %> control build-1 stop',
    '<%= config.bin %> control player-1 volume 40',
    '<%= config.bin %> control build-1 status --json',
  ],
  args: {
    run: {description: 'Run id or state dir', required: true},
    action: {description: 'pause, resume, stop, kill, interrupt, status, or a declared action', required: true},
    value: {description: 'value for a declared action (at most 4 KiB)'},
  },
  flags: {},

  async run({args, flags, json}) {
    // stop/kill end descendant Runs first (controlRun → tree/cascade.ts), reported as `descendants`.
    const outcome = await controlRun(resolveHome(flags.home), args.run!, args.action!, args.value, SERVICE_KINDS)
    if (!json) process.stdout.write(formatOutcome(outcome))
    return outcome
  },
})

function formatOutcome(outcome: ControlOutcome): string {
  if ('standalone' in outcome) return formatReply(outcome)
  if ('generation' in outcome) return formatStatus(outcome)
  if (outcome.handled_by === 'service') return formatReply(outcome.reply)
  if (outcome.action === 'interrupt') {
    process.stderr.write(`actors: SIGINT sent to ${outcome.signalled_groups.length} process group(s) of ${outcome.run}${outcome.fallback ? ` (kernel fallback: ${outcome.fallback})` : ''}\n`)
    return `${outcome.run} ${outcome.status}\n`
  }
  const note = outcome.fallback ? ` (kernel fallback: ${outcome.fallback})` : ''
  if (outcome.action === 'pause' || outcome.action === 'resume') {
    process.stderr.write(`actors: ${outcome.action === 'pause' ? 'stopped' : 'continued'} ${outcome.signalled.length} process(es) of ${outcome.run}${note}\n`)
  } else {
    process.stderr.write(`actors: ${outcome.action} sent to ${outcome.signalled.length} process(es) of ${outcome.run}${note}${outcome.settled ? '' : '; result not recorded yet'}\n`)
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
  if (s.identity_mismatch.length) lines.push(`mismatch:    ${s.identity_mismatch.join(' ')} (pid reused; never signalled)`)
  if (s.endpoint) lines.push(`endpoint:    ${s.endpoint.path}${s.endpoint.current ? '' : ' (other generation)'}`)
  if (s.controls.pending) lines.push(`pending:     ${s.controls.pending} control(s)`)
  if (s.result) lines.push(`result:      exit ${s.result.exit_code ?? '-'}${s.result.signal ? ` signal ${s.result.signal}` : ''}${s.result.reason ? ` (${s.result.reason})` : ''}`)
  // A playback service's own view, merged into the status (SPEC: Music).
  if (typeof s.state === 'string') lines.push(`playback:    ${formatPlayback(s)}`)
  if (s.service !== null) lines.push(`service:     ${JSON.stringify(s.service)}`)
  return lines.join('\n') + '\n'
}

/** A service's reply: a playback line when it carries playback status, else the reply as one JSON line. */
function formatReply(reply: Record<string, unknown>): string {
  const status = typeof reply.state === 'string' ? reply : (reply.status as Record<string, unknown> | undefined)
  return status && typeof status === 'object' && typeof status.state === 'string' ? `${formatPlayback(status)}\n` : JSON.stringify(reply) + '\n'
}

/** One line of playback status: state, position in the queue, track, time and volume. */
function formatPlayback(p: Record<string, unknown>): string {
  const where = typeof p.index === 'number' && typeof p.count === 'number' ? ` ${p.index + 1}/${p.count}` : ''
  const clock = (seconds: unknown) => formatClock(typeof seconds === 'number' ? seconds : null)
  const time = typeof p.position_seconds === 'number' ? `  ${clock(p.position_seconds)} / ${clock(p.duration_seconds)}` : ''
  return `${p.state}${where}${p.track ? `  ${p.track}` : ''}${time}${typeof p.volume === 'number' ? `  volume ${p.volume}` : ''}`
}
