/**
 * The live source of the Run views: a snapshot of the same kernel read
 * `inspect --json` prints (the listing, or the forest with `--tree`),
 * re-read when the state root changes. Changes are noticed through
 * file-system notifications (the `.bell` doorbell renamed in `$ACTORS_HOME`
 * on every Run state change, and entries appearing in `runs/`), not a polling
 * loop; a slow safety re-read covers file systems that do not notify and
 * changes nobody rang for, and an optional tick only advances the clock so
 * live durations move.
 */
import {watch, type FSWatcher} from 'node:fs'
import {BELL_FILE} from '../../base/bell/notify.js'
import {followUpEndedRuns} from '../tree/after-run.js'
import {RUNS_DIR_NAME, runsDir} from '../../base/platform/home.js'

export interface StateSnapshot<T> {
  data: T
  /** When `data` was read (durations in it were measured then). */
  readAt: number
  /** The clock the view shows (advanced by ticks). */
  now: number
  /** Increases on every re-read (not on clock ticks). */
  version: number
}

export interface StateStore<T> {
  /** The current snapshot (a new object after every change or tick). */
  snapshot(): StateSnapshot<T>
  /** Call `listener` after every change or tick; returns the unsubscribe function. */
  subscribe(listener: () => void): () => void
  /** Re-read now (also what notifications trigger). */
  refresh(): void
  /** Stop watching and ticking. */
  close(): void
}

export interface StateStoreOptions {
  /** Advance `now` this often for ticking durations (0: never). */
  tickMs?: number
  /** Re-read this often even without notifications (0: never). */
  safetyMs?: number
  /** Coalesce bursts of notifications into one re-read. */
  debounceMs?: number
}

/** Open a store over `read()` of the state root `home`; it watches until closed. */
export function createStateStore<T>(home: string, read: () => T, options: StateStoreOptions = {}): StateStore<T> {
  const {tickMs = 0, safetyMs = 5000, debounceMs = 25} = options
  const listeners = new Set<() => void>()
  let version = 0
  let current = load()
  let pending: NodeJS.Timeout | undefined
  let watchers: FSWatcher[] = []
  const timers: NodeJS.Timeout[] = []

  function load(): StateSnapshot<T> {
    const now = Date.now()
    const data = read()
    // Lost Runs this read settled: their follow-ups (queued siblings start) while the view stays open.
    followUpEndedRuns()
    return {data, readAt: now, now, version: ++version}
  }
  function emit(): void {
    for (const listener of listeners) listener()
  }
  function refresh(): void {
    if (pending) clearTimeout(pending)
    pending = undefined
    try {
      current = load()
    } catch {
      // A read that fails (a file mid-replacement on a foreign file system) keeps the last snapshot.
      return
    }
    // The home or runs dir may have appeared since: make sure both are watched.
    if (watchers.length < 2) startWatching()
    emit()
  }
  function schedule(): void {
    if (!pending) pending = setTimeout(refresh, debounceMs)
  }
  function startWatching(): void {
    for (const w of watchers) w.close()
    watchers = watchStateRoot(home, schedule)
  }

  startWatching()
  if (tickMs > 0) {
    timers.push(
      setInterval(() => {
        current = {...current, now: Date.now()}
        emit()
      }, tickMs),
    )
  }
  if (safetyMs > 0) timers.push(setInterval(refresh, safetyMs))

  return {
    snapshot: () => current,
    subscribe(listener) {
      listeners.add(listener)
      return () => listeners.delete(listener)
    },
    refresh,
    close() {
      if (pending) clearTimeout(pending)
      for (const timer of timers) clearInterval(timer)
      for (const w of watchers) w.close()
      watchers = []
      listeners.clear()
    },
  }
}

/** Watch the state root (for the doorbell and runs/ appearing) and runs/ (any entry); dirs not there yet are left out. */
function watchStateRoot(home: string, onChange: () => void): FSWatcher[] {
  const watchers: FSWatcher[] = []
  for (const [dir, matters] of [
    [home, ringsOrRunsDir],
    [runsDir(home), () => true],
  ] as const) {
    try {
      const watcher = watch(dir, (_event, name) => {
        if (matters(name)) onChange()
      })
      watcher.on('error', () => {})
      watchers.push(watcher)
    } catch {
      // Not created yet: the safety re-read picks it up later.
    }
  }
  return watchers
}

/**
 * Whether a change to `name` in the state root itself is worth a re-read: the
 * doorbell, or runs/ appearing (a platform that names no file: always). Other
 * files there (a user's notes, a log someone keeps in $ACTORS_HOME, the
 * reads' own caches) change without any Run changing, and one written on
 * every re-read would make the view re-read without pause.
 */
function ringsOrRunsDir(name: string | Buffer | null): boolean {
  return name === null || name === BELL_FILE || name === RUNS_DIR_NAME
}

/**
 * What a plain or JSON watcher compares to decide whether anything changed:
 * the rows' Runs, statuses and parents (not their ticking durations).
 */
export function rowsKey(
  rows: Array<{key: string; status: string; parent: string | null; usage?: string; where?: string}>,
  damaged: number,
): string {
  return JSON.stringify([rows.map((r) => [r.key, r.status, r.parent, r.usage ?? '', r.where ?? '']), damaged])
}

/** What a watched read looks like to the renderers (plain and Ink): whatever its rows, its damaged dirs. */
export interface WatchedListing {
  damaged: unknown[]
}
