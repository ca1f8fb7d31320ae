/**
 * The state behind the TTY view of `run --follow` and `logs --follow`: the
 * Run's output as complete lines tagged with their stream, and the Run's
 * status, updated from the same `followRunOutput` stream the plain and NDJSON
 * paths print and from notifications on the Run's dir (status changes).
 */
import {watch, type FSWatcher} from 'node:fs'
import {followRunOutput, type StreamName} from '../../kernel/runs/logs.js'
import {readRunState} from '../../kernel/runs/store.js'

export interface FollowLine {
  id: number
  stream: StreamName
  text: string
}

export interface FollowSnapshot {
  run: string
  status: string
  started_at: string | null
  /** Every line so far (the view writes each once, to scrollback). */
  lines: FollowLine[]
  ended: boolean
  now: number
}

export interface FollowStore {
  snapshot(): FollowSnapshot
  subscribe(listener: () => void): () => void
  /** Consume the Run's output until it ends (or `close`); resolves then. */
  run(): Promise<void>
  close(): void
}

export interface FollowStoreOptions {
  streams: StreamName[]
  /** Start at the beginning of the logs (else at their current end). */
  fromStart?: boolean
  /** Text shown before the followed output (e.g. `logs --tail N`). */
  head?: {stream: StreamName; text: string}
  /** Advance the clock this often so the running time moves (0: never). */
  tickMs?: number
}

/** Split a chunk into lines (a trailing newline ends the last line, it does not start a new one). */
export function chunkLines(text: string): string[] {
  const lines = text.split('\n')
  if (lines.at(-1) === '') lines.pop()
  return lines
}

/** Follow the Run in `dir`. */
export function createFollowStore(dir: string, options: FollowStoreOptions): FollowStore {
  const listeners = new Set<() => void>()
  const abort = new AbortController()
  const lines: FollowLine[] = []
  let nextId = 0
  let current: FollowSnapshot = {run: '', status: 'unknown', started_at: null, lines, ended: false, now: Date.now()}
  let watcher: FSWatcher | undefined
  let tick: NodeJS.Timeout | undefined

  const emit = () => {
    for (const listener of listeners) listener()
  }
  const readStatus = () => {
    try {
      const state = readRunState(dir, {withResult: false})
      if (state)
        current = {
          ...current,
          run: state.meta.run,
          status: state.meta.status,
          started_at: state.meta.started_at ?? null,
          now: Date.now(),
        }
    } catch {}
  }
  const add = (stream: StreamName, text: string) => {
    for (const line of chunkLines(text)) lines.push({id: nextId++, stream, text: line})
    current = {...current, lines: [...lines]}
  }

  readStatus()
  if (options.head?.text) add(options.head.stream, options.head.text)

  return {
    snapshot: () => current,
    subscribe(listener) {
      listeners.add(listener)
      return () => listeners.delete(listener)
    },
    async run() {
      try {
        watcher = watch(dir, () => {
          readStatus()
          emit()
        })
        watcher.on('error', () => {})
      } catch {}
      if (options.tickMs) {
        tick = setInterval(() => {
          current = {...current, now: Date.now()}
          emit()
        }, options.tickMs)
      }
      try {
        for await (const chunk of followRunOutput(dir, options.streams, options.fromStart ?? true, abort.signal)) {
          add(chunk.stream, chunk.text)
          readStatus()
          emit()
        }
      } finally {
        watcher?.close()
        if (tick) clearInterval(tick)
        readStatus()
        current = {...current, ended: true}
        emit()
      }
    },
    close() {
      abort.abort()
      watcher?.close()
      if (tick) clearInterval(tick)
      listeners.clear()
    },
  }
}
