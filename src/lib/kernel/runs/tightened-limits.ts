/**
 * Limits that only tighten down a tree (SPEC: Authority over files and Runs):
 * a Run's depth limit and parallel cap are what it asks for, never more than
 * any ancestor's run.json allows. Read from the ancestors' files, not from the
 * environment: a process inside a tree may set ACTORS_MAX_DEPTH to anything.
 */
import {ancestorMetas} from './ancestors.js'
import type {RunMeta} from '../../base/records/run.js'
import {maxDepth} from './tree-limits.js'

/** A limit recorded in run.json, when it is a usable whole number. */
function recorded(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0 ? value : undefined
}

/** `parent` and its ancestors, nearest first. */
export function lineOf(home: string, parent: RunMeta): RunMeta[] {
  return [parent, ...ancestorMetas(home, parent)]
}

/**
 * The depth limit for a Run launched below `parent` (or at top level without
 * one): ACTORS_MAX_DEPTH of the launching environment, lowered to the
 * smallest `max_depth` any ancestor recorded at its launch.
 */
export function effectiveMaxDepth(
  home: string,
  parent: RunMeta | undefined,
  env: NodeJS.ProcessEnv = process.env,
): number {
  const asked = maxDepth(env)
  if (!parent) return asked
  return Math.min(asked, ...lineOf(home, parent).map((meta) => recorded(meta.max_depth) ?? Infinity))
}

/**
 * The parallel cap a child records: its own `--max-parallel`, never above the
 * smallest cap of its ancestors (inherited when it asks for none). Undefined
 * when nobody above set one.
 */
export function effectiveMaxParallel(home: string, parent: RunMeta, asked: number | undefined): number | undefined {
  const caps = lineOf(home, parent)
    .map((meta) => recorded(meta.max_parallel))
    .filter((cap): cap is number => cap !== undefined && cap >= 1)
  const cap = Math.min(asked ?? Infinity, ...caps)
  return Number.isFinite(cap) ? cap : undefined
}
