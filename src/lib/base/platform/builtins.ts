/**
 * Node built-ins that cost milliseconds to load, loaded on first use instead
 * of at start-up (node:crypto about 3 ms, node:net and node:child_process 1 to
 * 2 ms each, against about 20 ms for a whole launch), and random ids that need
 * neither.
 */
import {openSync, readSync} from 'node:fs'

type BuiltinLoader = (id: string) => unknown
/**
 * A built-in module by name: process.getBuiltinModule (Node 20.16 and
 * later), else the bundle's own require (dist/ is CommonJS). Neither needs
 * node:module, which with the module loader parts it pulls in costs most of a
 * millisecond of every command's start.
 */
const load: BuiltinLoader =
  (process as unknown as {getBuiltinModule?: BuiltinLoader}).getBuiltinModule?.bind(process) ?? ((id) => require(id))

export const nodeCrypto = () => load('node:crypto') as typeof import('node:crypto')
export const childProcess = () => load('node:child_process') as typeof import('node:child_process')
/** node:net pulls in the stream modules (about 1.5 ms); only socket users need it (and Node itself, when stdout is a pipe). */
export const nodeNet = () => load('node:net') as typeof import('node:net')
/** node:os (about 0.4 ms): most commands never ask for a home, temporary dir or host name. */
export const nodeOs = () => load('node:os') as typeof import('node:os')
/** node:module: createRequire, for the paths that load another bundle or package (YAML Recipes, actors mcp). */
export const nodeModule = () => load('node:module') as typeof import('node:module')
/** node:worker_threads: only a large index rebuild starts a worker (platform/two-threads.ts). */
export const workerThreads = () => load('node:worker_threads') as typeof import('node:worker_threads')

let urandom: number | null | undefined

/** `count` cryptographically random bytes: from /dev/urandom where it exists (no node:crypto), else node:crypto. */
function randomBytes(count: number): Buffer {
  if (urandom === undefined) {
    try {
      urandom = openSync('/dev/urandom', 'r')
    } catch {
      urandom = null
    }
  }
  if (urandom !== null) {
    const bytes = Buffer.allocUnsafe(count)
    if (readSync(urandom, bytes, 0, count, null) === count) return bytes
  }
  return nodeCrypto().randomBytes(count)
}

/** `count` random bytes as lowercase hex (Run id suffixes, temporary file names). */
export function randomHex(count: number): string {
  return randomBytes(count).toString('hex')
}

/** A random (version 4) UUID, as crypto.randomUUID() makes. */
export function randomUuid(): string {
  const b = randomBytes(16)
  b[6] = (b[6] & 0x0f) | 0x40
  b[8] = (b[8] & 0x3f) | 0x80
  const hex = b.toString('hex')
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
}

const pad = (n: number, width = 2) => String(n).padStart(width, '0')

/**
 * `date.toISOString()` without its first-use cost: V8 loads the time zone
 * database (/etc/localtime, ICU) the first time it formats any date, about
 * 1 ms that a launch does not need for a UTC timestamp. Same text for every
 * date from year 0 to 9999.
 */
export function isoTime(date = new Date()): string {
  const year = date.getUTCFullYear()
  if (year < 0 || year > 9999) return date.toISOString()
  return `${pad(year, 4)}-${pad(date.getUTCMonth() + 1)}-${pad(date.getUTCDate())}T${pad(date.getUTCHours())}:${pad(date.getUTCMinutes())}:${pad(date.getUTCSeconds())}.${pad(date.getUTCMilliseconds(), 3)}Z`
}
