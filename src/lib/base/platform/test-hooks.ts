/**
 * Every test-only fault-injection hook, in one place: the tests set an
 * `ACTORS_TEST_*` variable to open a window (a pause, a kill midway, a
 * shared rebuild at small sizes) that real timing rarely shows. Kernel code
 * asks for a hook by name here and never reads the environment itself, so
 * the list below is the whole surface; an unset hook costs one lookup.
 */
import {sleepSync} from './sleep.js'

const HOOKS = {
  /** Supervisor: sleep this long between the ending check and the spawn of a step (supervise.ts). */
  spawnDelayMs: 'ACTORS_TEST_SPAWN_DELAY_MS',
  /** Supervisor: sleep this long before it records the Run's start, so a test can fill the disk then (run-unit.ts). */
  startDelayMs: 'ACTORS_TEST_START_DELAY_MS',
  /** Index: share rebuilds of at least this many state dirs with the worker thread, on any machine (index-rebuild.ts). */
  sharedRebuildMin: 'ACTORS_TEST_SHARED_REBUILD_MIN',
  /** Index worker: `worker-first`, `worker-fails` or `worker-stalls` (two-threads.ts). */
  sharedWork: 'ACTORS_TEST_SHARED_WORK',
  /** wait: hold a claimed batch unprinted this long, so a test can kill the wait there (deliver.ts). */
  waitPauseMs: 'ACTORS_TEST_WAIT_PAUSE_MS',
  /** wait: SIGKILL itself after marking this many Runs reported (reported.ts). */
  markKillAfter: 'ACTORS_TEST_MARK_KILL_AFTER',
  /** Generation move: where to pause (`staged` or `committed`; both when unset) and how long (generation-move.ts). */
  generationMoveAt: 'ACTORS_TEST_GENERATION_MOVE_AT',
  generationMoveDelayMs: 'ACTORS_TEST_GENERATION_MOVE_DELAY_MS',
  /** Control: sleep this long between pinning a Run's endpoint socket and connecting to it (signals/endpoint.ts). */
  endpointConnectDelayMs: 'ACTORS_TEST_ENDPOINT_CONNECT_DELAY_MS',
  /** Control: sleep this long between reading a Run's endpoint and pinning its socket (signals/endpoint.ts). */
  endpointPinDelayMs: 'ACTORS_TEST_ENDPOINT_PIN_DELAY_MS',
  /** Locks: wait this long (not 30 s) for a lock held by a live process before answering busy (file-lock.ts). */
  lockWaitMs: 'ACTORS_TEST_LOCK_WAIT_MS',
} as const

export type TestHook = keyof typeof HOOKS

/** The hook's value as set in this process's environment, or undefined. */
export function testHook(name: TestHook): string | undefined {
  const value = process.env[HOOKS[name]]
  return value === undefined || value === '' ? undefined : value
}

/** The hook as a positive number of whatever unit it names; 0 when unset or not a positive number. */
export function testHookNumber(name: TestHook): number {
  const value = Number(testHook(name) ?? 0)
  return Number.isFinite(value) && value > 0 ? value : 0
}

/** Sleep for the hook's milliseconds (at most `capMs`), when it is set. */
export function testHookPause(name: TestHook, capMs = 60_000): void {
  const ms = testHookNumber(name)
  if (ms > 0) sleepSync(Math.min(ms, capMs))
}

/**
 * Remove every test hook from `env`, in place. A fault is aimed at the
 * process a test started itself; commands, and supervisors that one starts
 * on its own (queued Runs), must never inherit it.
 */
export function dropTestHooks(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  for (const name of Object.keys(env)) if (name.startsWith('ACTORS_TEST_')) delete env[name]
  return env
}
