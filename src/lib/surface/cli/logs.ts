/** `actors logs`: a Run's stdout or stderr, whole, tailed or followed. */
import {followRun, plainLogText} from '../present/follow.js'
import {copyLogAsJsonString, copyLogToStdout} from '../present/log-stream.js'
import {jsonDocument, writeNote, writeStdout} from '../present/write.js'
import {documentResult, liveResult} from '../present/result.js'
import {resolveHome} from '../../base/platform/home.js'
import {fileSize} from '../../base/platform/state-files.js'
import {requireGeneration} from '../../kernel/runs/generation-list.js'
import {tailFile, type StreamName} from '../../kernel/runs/logs.js'
import {runFile} from '../../kernel/runs/store.js'
import {defineCommand} from './definition.js'

/** Most of a log one `logs --json` document carries (its end). */
const JSON_LOG_BYTES = 64 * 1024 * 1024

/**
 * The `logs --json` document ({run, stream, text}, as jsonDocument prints it)
 * with the text streamed from byte `from` of the log in pieces: memory stays
 * bounded whatever the log holds (a 2 GB sparse log took 1.3 GB built whole).
 */
async function printLogDocument(run: string, stream: StreamName, file: string, from: number): Promise<void> {
  const empty = jsonDocument({run, stream, text: ''})
  const cut = empty.lastIndexOf('""') + 1
  if (!(await copyLogAsJsonString(file, from, empty.slice(0, cut)))) return
  await writeStdout(empty.slice(cut)).catch(() => undefined)
}

export const logsCommand = defineCommand({
  id: 'logs',
  summary: "Print a Run's output (stdout; --stderr for stderr; --follow: both as they come)",
  examples: [
    '<%= config.bin %> logs build-1 --tail 50',
    '<%= config.bin %> logs build-1 --follow',
    '<%= config.bin %> logs build-1@2',
  ],
  args: {run: {description: 'Run id or state dir; RUN@N for its generation N', required: true}},
  flags: {
    follow: {
      type: 'boolean',
      char: 'f',
      description: 'keep printing output as it arrives until the Run ends (stdout and stderr, each to its own)',
    },
    stderr: {type: 'boolean', description: 'stderr instead of stdout'},
    tail: {type: 'integer', description: 'only the last N lines', min: 0},
  },

  async run({args, flags}) {
    const home = resolveHome(flags.home)
    const state = requireGeneration(home, args.run!)
    const stream: StreamName = flags.stderr ? 'stderr' : 'stdout'
    if (flags.follow) {
      // With --tail, start from the last N lines (of the stream asked for); otherwise from the beginning.
      const head =
        flags.tail === undefined ? undefined : {stream, text: tailFile(runFile(state.dir, stream), flags.tail)}
      // Both streams, stderr to stderr, as `run --follow` shows them; --stderr: that stream alone.
      return followRun(state.dir, {
        streams: flags.stderr ? ['stderr'] : ['stdout', 'stderr'],
        fromStart: flags.tail === undefined,
        head,
      })
    }
    const file = runFile(state.dir, stream)
    return liveResult({
      // One JSON document holds text, so at most the last 64 MiB; stderr says where it starts.
      json: async () => {
        const size = fileSize(file) // 0 before the log exists
        const notes =
          size > JSON_LOG_BYTES
            ? `actors: ${file} is ${size} bytes; --json shows its end from byte ${size - JSON_LOG_BYTES}; without --json, logs prints all of it\n`
            : undefined
        if (flags.tail === undefined) {
          if (notes) writeNote(notes)
          await printLogDocument(state.meta.run, stream, file, Math.max(0, size - JSON_LOG_BYTES))
          return undefined
        }
        return documentResult(
          {
            run: state.meta.run,
            stream,
            text: tailFile(
              file,
              flags.tail ?? Number.MAX_SAFE_INTEGER,
              flags.tail === undefined ? JSON_LOG_BYTES : undefined,
            ),
          },
          plainLogText,
          {notes},
        )
      },
      // Otherwise the bytes as they are, whole, streamed through a fixed buffer.
      plain: async () => {
        await copyLogToStdout(file, flags.tail)
        return undefined
      },
    })
  },
})
