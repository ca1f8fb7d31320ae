/**
 * Entry point of the worker thread a large index rebuild shares its state
 * dirs with (dist/index-worker.cjs; src/lib/runs/live-index.ts rebuildIndex,
 * src/lib/platform/two-threads.ts). It enters the chunks it takes exactly as
 * the rebuilding thread does, and sends back the launch log lines and the
 * queues it found.
 */
import {workAsWorker} from './lib/platform/two-threads.js'
import {enterStateDirs, newEnteredDirs, type EnteredDirsMessage, type RebuildJob} from './lib/runs/live-index.js'

const found = newEnteredDirs()
let legacy: Map<string, string> | undefined

workAsWorker<EnteredDirsMessage>(
  (data, start, end) => {
    const job = data as RebuildJob
    legacy ??= new Map(job.legacy)
    enterStateDirs(job, start, end, found, legacy, false)
  },
  () => ({launches: found.launches, queues: [...found.queues]}),
)
