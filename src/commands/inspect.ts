import {Args, Flags} from '@oclif/core'
import {ActorsCommand} from '../base-command.js'
import {formatDuration} from '../lib/duration.js'
import {inspectRun, listRunSummaries, parseStatusFilter, type RunDetail} from '../lib/inspect.js'
import {formatTable} from '../lib/output.js'

export default class Inspect extends ActorsCommand {
  static summary = 'Show Runs: a table, one Run in detail, or the Run tree'
  static examples = ['<%= config.bin %> inspect', '<%= config.bin %> inspect build-1 --json', '<%= config.bin %> inspect --status running,paused']
  static args = {run: Args.string({description: 'Run id or state dir'})}
  static flags = {
    status: Flags.string({description: 'only Runs with these statuses (comma-separated)'}),
    tree: Flags.boolean({description: 'show the Run forest (or the subtree of RUN)'}),
    watch: Flags.boolean({description: 'live view until interrupted'}),
  }

  async run(): Promise<unknown> {
    const {args, flags} = await this.parse(Inspect)
    const home = this.home(flags)
    if (args.run) {
      const detail = inspectRun(home, args.run)
      if (!this.jsonEnabled()) process.stdout.write(formatDetail(detail))
      return detail
    }
    const listing = listRunSummaries(home, parseStatusFilter(flags.status))
    if (!this.jsonEnabled()) {
      const rows = listing.runs.map((r) => [r.run, r.recipe ?? '-', r.status, r.started_at?.replace('T', ' ').slice(0, 19) ?? '-', formatDuration(r.duration_ms ?? undefined), r.parent ?? '-'])
      process.stdout.write(rows.length ? formatTable(['RUN', 'RECIPE', 'STATUS', 'STARTED', 'DURATION', 'PARENT'], rows) + '\n' : '')
      if (!rows.length) process.stderr.write('no Runs yet; start one with `actors run demo`\n')
      for (const d of listing.damaged) process.stderr.write(`actors: skipped ${d.state_dir}: ${d.error}\n`)
    }
    return listing
  }
}

function formatDetail(d: RunDetail): string {
  const lines = [
    `run:        ${d.run}`,
    `instance:   ${d.run_instance_id}`,
    `recipe:     ${d.recipe ?? '(ad-hoc)'}`,
    `status:     ${d.status}${d.exit_code !== null ? ` (exit ${d.exit_code})` : ''}${d.result?.reason ? ` reason ${d.result.reason}` : ''}`,
    `argv:       ${JSON.stringify(d.meta.argv)}`,
    `started:    ${d.started_at ?? '-'}`,
    `duration:   ${formatDuration(d.duration_ms ?? undefined)}`,
    `parent:     ${d.parent ?? '-'}`,
    `state dir:  ${d.state_dir}`,
  ]
  if (d.controls.length) lines.push(`controls:   ${d.controls.join(', ')}`)
  for (const a of d.artifacts) lines.push(`artifact:   ${a.name} ${a.path} ${a.bytes ?? 'missing'} bytes ${a.sha256 ?? ''}`.trimEnd())
  if (d.trace.length) {
    lines.push('trace:')
    for (const e of d.trace) lines.push(`  ${e.ts.slice(11, 23)} ${e.kind}${e.summary ? `  ${e.summary}` : ''}`)
  }
  return lines.join('\n') + '\n'
}
