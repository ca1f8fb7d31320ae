/**
 * Resource limits of a Run (SPEC: Containment): Recipe `limits: {memory:
 * "512M", cpu: 1.5, pids: 256}` and `run --memory/--cpus/--pids`, checked
 * before anything starts and normalised to what a cgroup takes. Limits need
 * a cgroup: under tracked containment a Run with limits is refused (exit 2).
 */
import {usageError} from '../../base/platform/errors.js'
import {containmentKind} from './index.js'
import type {UnitLimits} from './unit.js'

/** The Recipe field as written. */
export interface RecipeLimits {
  memory?: string | number
  cpu?: number
  pids?: number
}

const SIZE = /^(\d+(?:\.\d+)?)\s*([KMGT]?)(i?B?)?$/i
const UNIT: Record<string, number> = {'': 1, K: 1024, M: 1024 ** 2, G: 1024 ** 3, T: 1024 ** 4}
/** A cgroup refuses (or cannot live in) less than this. */
const MIN_MEMORY = 1024 * 1024

/** `512M`, `1.5G`, `1048576` → bytes (powers of 1024, like systemd and Docker); undefined when not a size. */
export function parseMemorySize(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isSafeInteger(value) && value >= MIN_MEMORY ? value : undefined
  if (typeof value !== 'string') return undefined
  const m = SIZE.exec(value.trim())
  if (!m) return undefined
  const bytes = Math.floor(Number(m[1]) * UNIT[m[2].toUpperCase()])
  return Number.isSafeInteger(bytes) && bytes >= MIN_MEMORY ? bytes : undefined
}

/** A CPU count (1.5 = one and a half CPUs), from 0.01 up. */
export function parseCpus(value: unknown): number | undefined {
  const n = typeof value === 'string' && /^\d+(\.\d+)?$/.test(value) ? Number(value) : value
  return typeof n === 'number' && Number.isFinite(n) && n >= 0.01 && n <= 4096 ? n : undefined
}

/** A process count, from 1 up. */
export function parsePids(value: unknown): number | undefined {
  const n = typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value
  return typeof n === 'number' && Number.isSafeInteger(n) && n >= 1 ? n : undefined
}

/** What to give for each limit, in messages about the Recipe field and the flags. */
export const LIMIT_FIXES = {
  memory: 'a size such as 512M, 2G or 1.5G (powers of 1024; at least 1M)',
  cpu: 'a number of CPUs such as 1, 0.5 or 1.5',
  pids: 'a whole number of processes, at least 1, e.g. 256',
}

/** The Recipe's limits as a cgroup takes them. */
export function normaliseRecipeLimits(limits: RecipeLimits): UnitLimits {
  return {
    ...(limits.memory !== undefined ? {memory_bytes: parseMemorySize(limits.memory)} : {}),
    ...(limits.cpu !== undefined ? {cpus: limits.cpu} : {}),
    ...(limits.pids !== undefined ? {pids: limits.pids} : {}),
  }
}

/** `run --memory/--cpus/--pids` (each overrides the Recipe's); a bad value is a usage error naming the flag. */
export function limitFlags(flags: {memory?: string; cpus?: string; pids?: number}): UnitLimits {
  const out: UnitLimits = {}
  const check = <T>(flag: string, value: unknown, parse: (v: unknown) => T | undefined, fix: string): T => {
    const parsed = parse(value)
    if (parsed === undefined) throw usageError(`--${flag} ${JSON.stringify(value)} is not valid`, `give ${fix}`)
    return parsed
  }
  if (flags.memory !== undefined) out.memory_bytes = check('memory', flags.memory, parseMemorySize, LIMIT_FIXES.memory)
  if (flags.cpus !== undefined) out.cpus = check('cpus', flags.cpus, parseCpus, LIMIT_FIXES.cpu)
  if (flags.pids !== undefined) out.pids = check('pids', flags.pids, parsePids, LIMIT_FIXES.pids)
  return out
}

const LIMIT_NAMES: Record<keyof UnitLimits, string> = {memory_bytes: 'memory', cpus: 'cpu', pids: 'pids'}

/**
 * Refuse, before anything starts, a local Run with limits that this machine
 * cannot enforce (tracked containment): exit 2, naming the fix.
 */
export function requireEnforceableLimits(limits: UnitLimits): void {
  if (Object.keys(limits).length === 0 || containmentKind() === 'cgroup') return
  const why =
    process.env.ACTORS_CONTAINMENT === 'tracked'
      ? 'ACTORS_CONTAINMENT=tracked is set'
      : 'no writable cgroup v2 hierarchy is available to this process'
  throw usageError(
    `limits (${Object.keys(limits)
      .map((k) => LIMIT_NAMES[k as keyof UnitLimits])
      .join(', ')}) need cgroup containment, and ${why}`,
    'drop the limits (Recipe `limits`, --memory/--cpus/--pids), or run where a cgroup can be made: as root, in a delegated systemd scope (systemd-run --user --scope -p Delegate=yes), or with $ACTORS_CGROUP naming a delegated cgroup',
  )
}
