/**
 * Following a Run's output to the end (`run --follow`, `logs --follow`), with
 * the one output decision: the Ink follow view on a TTY, NDJSON under
 * `--json`, plain text otherwise; then the Run's result line and the exit
 * code it implies.
 */
import {importView} from './esm-import.js'
import {EXIT} from './errors.js'
import {followRunOutput, type OutputChunk, type StreamName} from './logs.js'
import {decideOutput} from './output.js'
import {stdoutClosed} from './output-guard.js'
import {readRunState} from './run-store.js'
import {FAILING_STATUSES} from './run-types.js'
import {createFollowStore} from './views/follow-store.js'

export interface FollowOptions {
  streams: StreamName[]
  json: boolean
  /** Start from the beginning of the logs (else from their current end, after `head`). */
  fromStart: boolean
  /** Text printed first (e.g. the last N lines when starting from the end). */
  head?: OutputChunk
}

/** Stream the Run's output until it ends; returns false when the user interrupted the live view (exit 130). */
export async function followToEnd(dir: string, options: FollowOptions): Promise<boolean> {
  const {json, streams} = options
  if (decideOutput(json) === 'ink') {
    const {showFollow} = await importView<typeof import('../views/follow-live.js')>('follow-live')
    const store = createFollowStore(dir, {streams, fromStart: options.fromStart, head: options.head, tickMs: 1000})
    if (await showFollow(store)) {
      process.exitCode = 130
      return false
    }
  } else {
    const write = (chunk: OutputChunk) => {
      if (json) process.stdout.write(JSON.stringify({type: 'output', ...chunk}) + '\n')
      else (chunk.stream === 'stderr' && streams.length > 1 ? process.stderr : process.stdout).write(chunk.text)
    }
    if (options.head?.text) write(options.head)
    // A reader that went away (`| head`) ends the follow; the Run goes on.
    for await (const chunk of followRunOutput(dir, streams, options.fromStart, stdoutClosed)) write(chunk)
    if (stdoutClosed.aborted) return true
  }
  printFollowEnd(dir, json)
  return true
}

/** Print the Run's result as the last line of a follow and set the process exit code from it. */
export function printFollowEnd(dir: string, json: boolean): void {
  const state = readRunState(dir)
  if (!state) return
  const result = state.result
  const status = result?.status ?? state.meta.status
  if (json) {
    process.stdout.write(JSON.stringify({type: 'result', run: state.meta.run, run_instance_id: state.meta.run_instance_id, status, exit_code: result?.exit_code ?? null, reason: result?.reason ?? null, duration_ms: result?.duration_ms ?? null}) + '\n')
  } else {
    process.stderr.write(`actors: ${state.meta.run} ${status}${result?.exit_code !== null && result?.exit_code !== undefined ? ` (exit ${result.exit_code})` : ''}\n`)
  }
  // As for `wait`: a stopped (cancelled) Run is an outcome someone chose, not a failure.
  process.exitCode = FAILING_STATUSES.has(status) ? EXIT.failed : EXIT.ok
}
