/**
 * Singleton Recipes (`singleton: true`): at most one live Run per Recipe in a
 * state root. Relaunching with equal values hands back the running Run
 * (`reused: true`) instead of starting a second one; different values are
 * refused (exit 5) naming each value that differs. Check and launch happen
 * under one lock per Recipe, so two simultaneous launches cannot both start.
 */
import {nodeCrypto} from '../../base/platform/builtins.js'
import {join} from 'node:path'
import {refusedError} from '../../base/platform/errors.js'
import {ensureHome} from '../../base/platform/home.js'
import type {LaunchResult} from './launch.js'
import {withLockSync} from '../../base/platform/file-lock.js'
import {readIndexedRuns} from '../../kernel/history/index-reader.js'
import {isTerminal} from '../../base/records/run.js'

export type SingletonLaunchResult = LaunchResult & {reused?: true}

/** JSON with sorted object keys, so equal values compare equal whatever their key order. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`
  if (value && typeof value === 'object') {
    return `{${Object.keys(value as object)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`)
      .join(',')}}`
  }
  return JSON.stringify(value) ?? 'undefined'
}

/** Names and both sides of every value that differs between the running Run and the request. */
export function valueDifferences(
  running: Record<string, unknown>,
  wanted: Record<string, unknown>,
): Array<{name: string; running: unknown; wanted: unknown}> {
  const names = [...new Set([...Object.keys(running ?? {}), ...Object.keys(wanted ?? {})])].sort()
  return names
    .filter((name) => canonical(running?.[name]) !== canonical(wanted?.[name]))
    .map((name) => ({name, running: running?.[name], wanted: wanted?.[name]}))
}

function show(value: unknown): string {
  const text = value === undefined ? '(unset)' : JSON.stringify(value)
  return text.length > 60 ? text.slice(0, 60) + '…' : text
}

/**
 * Launch a singleton Recipe's Run through `launch`, unless a live Run of the
 * same Recipe exists: then return it (equal values) or refuse (exit 5).
 * Called by run-launcher.ts for every Recipe with `singleton: true`.
 */
export function launchSingleton(
  home: string,
  recipe: string,
  values: Record<string, unknown>,
  launch: () => LaunchResult,
): SingletonLaunchResult {
  ensureHome(home)
  const lock = join(
    home,
    `.singleton-${nodeCrypto().createHash('sha256').update(recipe).digest('hex').slice(0, 16)}.lock`,
  )
  return withLockSync(lock, () => {
    // Live Runs are all in the run index: the check costs what is live, not the history.
    const running = readIndexedRuns(home, {queued: 'none'}).runs.find(
      (r) => r.meta.singleton === true && r.meta.recipe === recipe && !isTerminal(r.meta.status),
    )
    if (!running) return launch()
    const meta = running.meta
    const differences = valueDifferences(meta.values ?? {}, values)
    if (differences.length > 0) {
      const listed = differences.map((d) => `${d.name}: running ${show(d.running)}, asked ${show(d.wanted)}`).join('; ')
      throw refusedError(
        `singleton Recipe ${recipe} is already running as ${meta.run} with different values (${listed})`,
        `stop it first (actors control ${meta.run} stop), or relaunch with the same values to reuse it`,
        {run: meta.run, state_dir: running.dir, differences},
      )
    }
    const reused: SingletonLaunchResult = {
      run: meta.run,
      run_instance_id: meta.run_instance_id,
      state_dir: running.dir,
      status: meta.status,
      pid: meta.pid ?? null,
      generation: meta.generation ?? 1,
      reused: true,
    }
    return reused
  })
}
