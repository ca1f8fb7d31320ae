/**
 * Entry point of the worker thread a large index rebuild shares its state
 * dirs with (dist/index-worker.cjs; src/lib/kernel/history/index-rebuild.ts rebuildIndex,
 * src/lib/base/platform/two-threads.ts). It enters the chunks it takes exactly as
 * the rebuilding thread does, and sends back the launch log lines and the
 * queues it found.
 */
import {installExecutors} from '../lib/kernel/executors/index.js'
import {workAsWorker} from '../lib/base/platform/two-threads.js'
import {enterStateDirs, newEnteredDirs, type EnteredDirs, type RebuildJob} from '../lib/kernel/history/index-rebuild.js'

installExecutors()
const found = newEnteredDirs()

workAsWorker<EnteredDirs>(
  (job, start, end) => enterStateDirs(job as RebuildJob, start, end, found, false),
  () => found,
)
