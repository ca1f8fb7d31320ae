/**
 * The live source of every Run view: a snapshot of the same listing
 * `inspect --json` prints, re-read when the state root changes. Changes are
 * noticed through file-system notifications (the `.bell` doorbell renamed in
 * `$ACTORS_HOME` on every Run state change, and entries appearing in `runs/`),
 * not a polling loop; a slow safety re-read covers file systems that do not
 * notify, and an optional tick only advances the clock so live durations move.
 */
import {watch, type FSWatcher} from 'node:fs'
import {runsDir} from '../home.js'
import {listRunSummaries, type RunListing} from '../inspect.js'

export interface RunsSnapshot extends RunListing {
  /** The clock the view should measure live durations against. */
  now: number
  /** Increases on every re-read (not on clock ticks). */
  version: number
}

export interface RunsStore {
  /** The current snapshot (a new object after every change or tick). */
  snapshot(): RunsSnapshot
  /** Call `listener` after every change or tick; returns the unsubscribe function. */
  subscribe(listener: () => void): () => void
  /** Re-read now (also what notifications trigger). */
  refresh(): void
  /** Stop watching and ticking. */
  close(): void
}

export interface RunsStoreOptions {
  statuses?: Set<string>
  /** Advance `now` this often for ticking durations (0: never). */
  tickMs?: number
  /** Re-read this often even without notifications (0: never). */
  safetyMs?: number
  /** Coalesce bursts of notifications into one re-read. */
  debounceMs?: number
}

/** Open a store over the Runs of `home`; it watches until closed. */
export function createRunsStore(home: string, options: RunsStoreOptions = {}): RunsStore {
  const {statuses, tickMs = 0, safetyMs = 5000, debounceMs = 25} = options
  const listeners = new Set<() => void>()
  let version = 0
  let current: RunsSnapshot = read()
  let pending: NodeJS.Timeout | undefined
  let watchers: FSWatcher[] = []
  const timers: NodeJS.Timeout[] = []

  function read(): RunsSnapshot {
    return {...listRunSummaries(home, statuses), now: Date.now(), version: ++version}
  }
  function emit(): void {
    for (const listener of listeners) listener()
  }
  function refresh(): void {
    if (pending) clearTimeout(pending)
    pending = undefined
    current = read()
    // The home or runs dir may have appeared since: make sure both are watched.
    if (watchers.length < 2) startWatching()
    emit()
  }
  function schedule(): void {
    if (!pending) pending = setTimeout(refresh, debounceMs)
  }
  function startWatching(): void {
    for (const w of watchers) w.close()
    watchers = []
    for (const dir of [home, runsDir(home)]) {
      try {
        const watcher = watch(dir, schedule)
        watcher.on('error', () => {})
        watchers.push(watcher)
      } catch {
        // Not created yet: the safety re-read picks it up later.
      }
    }
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

/**
 * What a plain or JSON watcher compares to decide whether anything changed:
 * the Runs, their instances and statuses (not their ticking durations).
 */
export function snapshotKey(snapshot: RunListing): string {
  return JSON.stringify([snapshot.runs.map((r) => [r.run, r.run_instance_id, r.status, r.parent]), snapshot.damaged.map((d) => d.state_dir)])
}
