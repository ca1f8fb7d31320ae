import {importView} from '../lib/esm-import.js'
import {Args, Flags} from '@oclif/core'
import {ActorsCommand} from '../base-command.js'
import {resolveRunRef} from '../lib/home.js'
import {followRunOutput, tailFile, type StreamName} from '../lib/logs.js'
import {requireRun, runFile} from '../lib/run-store.js'
import {printFollowEnd} from '../lib/follow-output.js'
import {decideOutput} from '../lib/output.js'
import {createFollowStore} from '../lib/views/follow-store.js'

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
    if (flags.follow && decideOutput(json) === 'ink') {
      // On a TTY: the live follow view, starting from the tail when asked.
      const head = flags.tail === undefined ? undefined : {stream, text: tailFile(runFile(state.dir, stream), flags.tail)}
      const {showFollow} = await importView<typeof import('../views/follow-live.js')>('follow-live')
      if (await showFollow(createFollowStore(state.dir, {streams: [stream], fromStart: flags.tail === undefined, head, tickMs: 1000}))) return void (process.exitCode = 130)
      printFollowEnd(state.dir, json)
      return undefined
    }
    if (flags.follow) {
      // With --tail, start from the tail; otherwise from the beginning.
      if (flags.tail !== undefined) {
        const head = tailFile(runFile(state.dir, stream), flags.tail)
        if (head) json ? process.stdout.write(JSON.stringify({type: 'output', stream, text: head}) + '\n') : process.stdout.write(head)
      }
      for await (const chunk of followRunOutput(state.dir, [stream], flags.tail === undefined)) {
        if (json) process.stdout.write(JSON.stringify({type: 'output', ...chunk}) + '\n')
        else process.stdout.write(chunk.text)
      }
      printFollowEnd(state.dir, json)
      return undefined
    }
    const text = tailFile(runFile(state.dir, stream), flags.tail ?? Number.MAX_SAFE_INTEGER, flags.tail === undefined ? 64 * 1024 * 1024 : undefined)
    if (!json) process.stdout.write(text)
    return {run: state.meta.run, stream, text}
  }
}
