/**
 * Work shared between this thread and one worker thread, synchronously: for
 * the rare job that is tens of thousands of independent system calls (an
 * index rebuild reads every state dir, src/lib/kernel/history/index-rebuild.ts), where a
 * second core takes about a quarter off the wall time, and whose caller cannot await
 * (it holds a file lock, and its callers are synchronous).
 *
 * The items 0..count-1 are taken in chunks from a shared counter (Atomics),
 * so neither thread waits for the other: the worker takes its share once it
 * is up (Node needs tens of milliseconds to boot one), and a worker that
 * never starts leaves every chunk to this thread. Each thread keeps what it
 * found; the worker sends its findings over a message port when it runs out
 * of chunks, and this thread, blocked in Atomics.wait, takes them with
 * receiveMessageOnPort. A worker that fails, or stops making progress for
 * STALL_MS, loses its chunks: this thread does them again, so a chunk's
 * work must be safe to do twice.
 */
import type {MessagePort} from 'node:worker_threads'
import {nodeOs, workerThreads} from './builtins.js'
import {testHook} from './test-hooks.js'

type WorkerThreads = typeof import('node:worker_threads')

/** Shared Int32Array slots. */
const NEXT_CHUNK = 0
const WORKER_STATE = 1
/** Chunks the worker has finished: what "progress" means while this thread waits. */
const WORKER_DONE = 2
/** Then one slot per chunk: who took it. */
const OWNERS = 3

const RUNNING = 0
const FINISHED = 1
const FAILED = 2

const TAKEN_HERE = 1
const TAKEN_BY_WORKER = 2

/** A worker that finishes no chunk for this long is given up on (a chunk is a few hundred state dirs: milliseconds). */
const STALL_MS = 10_000

/** What the worker thread is given (workerData). */
interface WorkerJob {
  shared: Int32Array
  port: MessagePort
  count: number
  chunkSize: number
  data: unknown
}

export interface SharedWork<R> {
  count: number
  chunkSize: number
  /** Do items [start, end) on this thread. */
  runChunk(start: number, end: number): void
  /** The worker's script (a CommonJS file that calls workAsWorker) and what it is given; none: all on this thread. */
  worker?: {file: string; data: unknown}
  /** Take in what the worker found, as it sent it. */
  merge(result: R): void
}

/** Whether a second thread can help here: more than one core to run on. */
export function secondCoreAvailable(): boolean {
  return nodeOs().availableParallelism() > 1
}

/** Do `work` on this thread and, when it names one, a worker thread; returns how many chunks the worker's findings cover. */
export function shareWork<R>(work: SharedWork<R>): number {
  const chunks = Math.ceil(work.count / work.chunkSize)
  const shared = new Int32Array(new SharedArrayBuffer(4 * (OWNERS + chunks)))
  const runChunk = (chunk: number) =>
    work.runChunk(chunk * work.chunkSize, Math.min(work.count, (chunk + 1) * work.chunkSize))
  const started = work.worker && chunks > 1 ? startWorker(work.worker, shared, work.count, work.chunkSize) : undefined
  if (started) testLetWorkerGoFirst(shared)
  for (;;) {
    const chunk = Atomics.add(shared, NEXT_CHUNK, 1)
    if (chunk >= chunks) break
    Atomics.store(shared, OWNERS + chunk, TAKEN_HERE)
    runChunk(chunk)
  }
  if (!started) return 0
  const {worker, port, threads} = started
  // Every chunk is taken now; those not taken here are the worker's, claimed or done (it may not have marked a claim yet).
  const theirs: number[] = []
  for (let chunk = 0; chunk < chunks; chunk++)
    if (Atomics.load(shared, OWNERS + chunk) !== TAKEN_HERE) theirs.push(chunk)
  let covered = 0
  if (theirs.length > 0) {
    const result = awaitWorker(shared, port, threads)
    if (result) {
      work.merge(result.message as R)
      covered = theirs.length
    } else {
      // Failed or stalled: what it found is lost with it, so its chunks are done again here.
      for (const chunk of theirs) runChunk(chunk)
    }
  }
  port.close()
  void worker.terminate()
  if (testHook('sharedWork'))
    process.stderr.write(`actors: test: the worker's findings covered ${covered} of ${chunks} chunks\n`)
  return covered
}

/**
 * Test-only (test/history.test.ts), so that tests see the worker take part
 * whatever the timing: `worker-first` and `worker-stalls` let the worker
 * finish a chunk before this thread takes any (the latter then hangs in its
 * second chunk); `worker-fails` lets it fail (halfway through its second
 * chunk) first.
 */
function testLetWorkerGoFirst(shared: Int32Array): void {
  const mode = testHook('sharedWork')
  if (mode === 'worker-first' || mode === 'worker-stalls') Atomics.wait(shared, WORKER_DONE, 0, 30_000)
  if (mode === 'worker-fails') Atomics.wait(shared, WORKER_STATE, RUNNING, 30_000)
}

/** How long a worker may go without finishing a chunk: STALL_MS, or half a second for the test of a hung worker. */
function stallMs(): number {
  return testHook('sharedWork') === 'worker-stalls' ? 500 : STALL_MS
}

function startWorker(spec: {file: string; data: unknown}, shared: Int32Array, count: number, chunkSize: number) {
  try {
    const threads = workerThreads()
    const {port1, port2} = new threads.MessageChannel()
    const job: WorkerJob = {shared, port: port2, count, chunkSize, data: spec.data}
    const worker = new threads.Worker(spec.file, {workerData: job, transferList: [port2], stdout: true, stderr: true})
    // Never what keeps this process alive; its errors are seen through the shared state (an 'error' listener keeps them from throwing here).
    worker.unref()
    worker.on('error', () => {})
    return {worker, port: port1, threads}
  } catch {
    return undefined
  }
}

/** Block until the worker sent its findings (returned), failed, or made no progress for STALL_MS (undefined). */
function awaitWorker(shared: Int32Array, port: MessagePort, threads: WorkerThreads): {message: unknown} | undefined {
  for (;;) {
    const state = Atomics.load(shared, WORKER_STATE)
    if (state === FINISHED) return threads.receiveMessageOnPort(port)
    if (state === FAILED) return undefined
    const done = Atomics.load(shared, WORKER_DONE)
    if (
      Atomics.wait(shared, WORKER_STATE, RUNNING, stallMs()) === 'timed-out' &&
      Atomics.load(shared, WORKER_DONE) === done
    )
      return undefined
  }
}

/**
 * The worker's side of shareWork: take chunks until none is left, doing each
 * with `runChunk`, then send `result()`. Call it from the worker's script.
 */
export function workAsWorker<R>(runChunk: (data: unknown, start: number, end: number) => void, result: () => R): void {
  const threads = workerThreads()
  const job = threads.workerData as WorkerJob
  const {shared, port} = job
  const chunks = Math.ceil(job.count / job.chunkSize)
  try {
    let finished = 0
    for (;;) {
      const chunk = Atomics.add(shared, NEXT_CHUNK, 1)
      if (chunk >= chunks) break
      Atomics.store(shared, OWNERS + chunk, TAKEN_BY_WORKER)
      const start = chunk * job.chunkSize
      const end = Math.min(job.count, start + job.chunkSize)
      // Test-only: fail, or hang for a minute, halfway through the second chunk, as a worker that dies or blocks midway would.
      if (finished === 1 && testHook('sharedWork') === 'worker-fails') {
        runChunk(job.data, start, start + ((end - start) >> 1))
        throw new Error('test: the worker fails')
      }
      if (finished === 1 && testHook('sharedWork') === 'worker-stalls') {
        runChunk(job.data, start, start + ((end - start) >> 1))
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 60_000)
      }
      runChunk(job.data, start, end)
      finished++
      Atomics.add(shared, WORKER_DONE, 1)
      Atomics.notify(shared, WORKER_DONE)
    }
    port.postMessage(result())
    Atomics.store(shared, WORKER_STATE, FINISHED)
  } catch {
    Atomics.store(shared, WORKER_STATE, FAILED)
  }
  Atomics.notify(shared, WORKER_STATE)
  port.close()
}
