/** The closing line of a followed Run (plain or NDJSON) and the exit code it implies. */
import {EXIT} from './errors.js'
import {readRunState} from './run-store.js'

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
  process.exitCode = status === 'done' ? EXIT.ok : EXIT.failed
}
