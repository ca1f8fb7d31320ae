/**
 * Reading another process's environment from /proc, in one place: the
 * kernel finds a Run's processes by the variables every command of it
 * inherits (ACTORS_STATE_DIR, ACTORS_RUN_INSTANCE), facts a Run cannot
 * rewrite for a process it did not start.
 */
import {readFileSync} from 'node:fs'

const NUL = Buffer.from([0])

/**
 * `pid`'s environment framed by NULs (`\0A=1\0B=2\0`), so a variable is
 * found as `\0NAME=` and a whole one as `\0NAME=value\0`; undefined when it
 * cannot be read (gone, another user's, no /proc).
 */
export function environOf(pid: number): Buffer | undefined {
  try {
    return Buffer.concat([NUL, readFileSync(`/proc/${pid}/environ`), NUL])
  } catch {
    return undefined
  }
}

/** The key envValue looks for: `\0NAME=` (build it once for a name asked about in a loop). */
export function envKey(name: string): Buffer {
  return Buffer.from(`\0${name}=`)
}

/** The value of a variable in an environment from environOf (`key`: its name, or envKey(name)); undefined when unset. */
export function envValue(environ: Buffer, key: string | Buffer): string | undefined {
  const wanted = typeof key === 'string' ? envKey(key) : key
  const at = environ.indexOf(wanted)
  if (at < 0) return undefined
  const end = environ.indexOf(0, at + wanted.length)
  return environ.toString('utf8', at + wanted.length, end < 0 ? undefined : end)
}

/** The value of variable `name` in `pid`'s environment, or undefined. */
export function processEnvValue(pid: number, name: string): string | undefined {
  const environ = environOf(pid)
  return environ && envValue(environ, name)
}

/** `pid`'s whole environment as an object (as it was when the process started), or undefined when unreadable. */
export function environRecord(pid: number): NodeJS.ProcessEnv | undefined {
  const environ = environOf(pid)
  if (!environ) return undefined
  const env: NodeJS.ProcessEnv = {}
  for (const entry of environ.toString('utf8').split('\0')) {
    const at = entry.indexOf('=')
    if (at > 0) env[entry.slice(0, at)] = entry.slice(at + 1)
  }
  return env
}
