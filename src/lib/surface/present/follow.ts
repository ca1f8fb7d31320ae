/**
 * A Run's output (`logs`, `logs --follow`, `run --follow`): the whole text,
 * or followed to the end with one renderer per mode (the Ink follow view on
 * a TTY, NDJSON under `--json`, the raw text otherwise), then the Run's
 * result line and the exit code it implies.
 */
import {importView} from '../../base/platform/esm-import.js'
import {EXIT} from '../../base/platform/errors.js'
import type {LaunchResult} from '../../services/launch/launch.js'
import {followRunOutput, type LogShrank, type OutputChunk, type StreamName} from '../../kernel/runs/logs.js'
import {inertText} from '../../base/platform/text.js'
import {readRunState} from '../../kernel/runs/store.js'
import {FAILING_STATUSES} from '../../base/records/run.js'
import {createFollowStore} from '../../services/view-state/follow-store.js'
import {stdoutCaughtUp, stdoutGone} from './stdout-reader.js'
import {exitResult, liveResult, type CommandResult, type LiveResult, type TextSinks} from './result.js'
import {writeNdjson, writeNote, writeOut} from './write.js'
import {generationNote} from './launch.js'

export interface FollowOptions {
  streams: StreamName[]
  /** Start from the beginning of the logs (else from their current end, after `head`). */
  fromStart: boolean
  /** Text printed first (e.g. the last N lines when starting from the end). */
  head?: OutputChunk
  /** `run --follow`: the launch, said first (an NDJSON `launched` line, or a line on stderr). */
  launched?: LaunchResult
}

/** `logs` without --follow: the text as it is. */
export function plainLogText(doc: {text: string}, to: TextSinks): void {
  to.out(doc.text)
}

/** Stream the Run's output in `dir` until it ends (see above). */
export function followRun(dir: string, options: FollowOptions): LiveResult {
  const {streams, launched} = options
  const sayLaunched = () => {
    if (launched) writeNote(`actors: started ${launched.run} (${launched.state_dir})\n${generationNote(launched)}`)
  }
  const streamChunks = async (write: (chunk: OutputChunk) => void): Promise<void> => {
    if (options.head?.text) write(options.head)
    // A reader that went away (`| head`) ends the follow; the Run goes on. Each piece waits for stdout to take
    // it (stdout-reader.ts), so a fast writer into a closed pipe is heard of at once instead of piling up.
    const what = ({read, size, how}: LogShrank) =>
      how === 'shrank'
        ? `shrank from ${read} to ${size} bytes (truncated)`
        : how === 'rewritten'
          ? `was truncated and written again (${size} bytes now; the ${read} bytes read before changed)`
          : `was replaced by another file (${size} bytes)`
    const shrank = (cut: LogShrank) =>
      writeNote(`actors: ${inertText(cut.file)} ${what(cut)}; following it from its start\n`)
    for await (const chunk of followRunOutput(dir, streams, options.fromStart, stdoutGone(), shrank)) {
      write(chunk)
      await stdoutCaughtUp()
      if (stdoutGone().aborted) break
    }
  }
  return liveResult({
    json: async () => {
      if (launched) writeNdjson({type: 'launched', ...launched})
      await streamChunks((chunk) => writeNdjson({type: 'output', stream: chunk.stream, text: chunk.text}))
      return stdoutGone().aborted ? undefined : jsonEnd(dir)
    },
    plain: async () => {
      sayLaunched()
      // The bytes as the command wrote them (non-UTF-8 ones too), as `logs` without --follow prints them.
      await streamChunks((chunk) =>
        (chunk.stream === 'stderr' && streams.length > 1 ? writeNote : writeOut)(chunk.bytes ?? chunk.text),
      )
      return stdoutGone().aborted ? undefined : plainEnd(dir)
    },
    ink: async () => {
      sayLaunched()
      // Follow from now, while the view loads (Ink and React: a tenth of a second or more), so lines are taken in
      // the order they come; read after the load, each log would be taken whole, stdout's before stderr's.
      const store = createFollowStore(dir, {streams, fromStart: options.fromStart, head: options.head, tickMs: 1000})
      const following = store.run()
      const {showFollow} = await importView<typeof import('../../../views/follow-live.js')>('follow-live')
      // Interrupting the view stops following only; the Run keeps going (exit 130).
      if (await showFollow(store, following)) return exitResult(130)
      return plainEnd(dir)
    },
  })
}

/** How the followed Run ended: its result (the NDJSON `result` line), the line for stderr, and the exit code it implies. */
function followEnd(dir: string): {result: Record<string, unknown>; line: string; exitCode: number} | undefined {
  const state = readRunState(dir)
  if (!state) return undefined
  const result = state.result
  const status = result?.status ?? state.meta.status
  return {
    result: {
      type: 'result',
      run: state.meta.run,
      run_instance_id: state.meta.run_instance_id,
      status,
      exit_code: result?.exit_code ?? null,
      reason: result?.reason ?? null,
      duration_ms: result?.duration_ms ?? null,
    },
    line: `actors: ${state.meta.run} ${status}${result?.exit_code !== null && result?.exit_code !== undefined ? ` (exit ${result.exit_code})` : ''}\n`,
    // As for `wait`: a stopped (cancelled) Run is an outcome someone chose, not a failure.
    exitCode: FAILING_STATUSES.has(status) ? EXIT.failed : EXIT.ok,
  }
}

/** The end of a follow under --json: the NDJSON `result` line. */
function jsonEnd(dir: string): CommandResult {
  const end = followEnd(dir)
  if (!end) return dirGone(dir)
  writeNdjson(end.result)
  return exitResult(end.exitCode)
}

/** The end of a plain or live follow: the result line on stderr. */
function plainEnd(dir: string): CommandResult {
  const end = followEnd(dir)
  return end ? exitResult(end.exitCode, end.line) : dirGone(dir)
}

/** A follow whose Run's state dir went away (the Run removed or moved it): no end to tell, and not a success. */
function dirGone(dir: string): CommandResult {
  return exitResult(
    EXIT.notFound,
    `actors: ${inertText(dir)} is gone (removed or moved) while it was followed; its command may still run: actors inspect\n`,
  )
}
