import {Args, Flags} from '@oclif/core'
import {ActorsCommand} from '../base-command.js'
import {followToEnd} from '../lib/follow-output.js'
import {resolveRunRef} from '../lib/home.js'
import {tailFile, type StreamName} from '../lib/logs.js'
import {requireRun, runFile} from '../lib/run-store.js'

export default class Logs extends ActorsCommand {
  static summary = "Print a Run's output (stdout; --stderr for stderr)"
  static examples = ['<%= config.bin %> logs build-1 --tail 50', '<%= config.bin %> logs build-1 --follow']
  static args = {run: Args.string({description: 'Run id or state dir', required: true})}
  static flags = {
    follow: Flags.boolean({char: 'f', description: 'keep printing output as it arrives until the Run ends'}),
    stderr: Flags.boolean({description: 'stderr instead of stdout'}),
    tail: Flags.integer({description: 'only the last N lines', min: 0}),
  }

  async run(): Promise<unknown> {
    const {args, flags} = await this.parse(Logs)
    const home = this.home(flags)
    const state = requireRun(home, resolveRunRef(home, args.run))
    const stream: StreamName = flags.stderr ? 'stderr' : 'stdout'
    const json = this.jsonEnabled()
    if (flags.follow) {
      // With --tail, start from the last N lines; otherwise from the beginning.
      const head = flags.tail === undefined ? undefined : {stream, text: tailFile(runFile(state.dir, stream), flags.tail)}
      await followToEnd(state.dir, {streams: [stream], json, fromStart: flags.tail === undefined, head})
      return undefined
    }
    const text = tailFile(runFile(state.dir, stream), flags.tail ?? Number.MAX_SAFE_INTEGER, flags.tail === undefined ? 64 * 1024 * 1024 : undefined)
    if (!json) process.stdout.write(text)
    return {run: state.meta.run, stream, text}
  }
}
