/**
 * A command started through a cgroup's join wrapper (cgroup-unit.ts) is
 * exec'd by sh, which would report a missing command in its own words:
 * checking first keeps a missing command a spawn failure (127), as when it
 * is spawned directly.
 */
import {accessSync, constants} from 'node:fs'
import {delimiter, isAbsolute, join, resolve} from 'node:path'

/** Why `command` cannot be started with `env`'s PATH from `cwd` (as execvp would look), or undefined when it can. */
export function commandStartError(command: string, env: NodeJS.ProcessEnv, cwd: string): string | undefined {
  if (command.includes('/'))
    return executable(isAbsolute(command) ? command : resolve(cwd, command)) ? undefined : `spawn ${command} ENOENT`
  // Each PATH entry in turn, up to the first that has it (an absolute entry needs no resolving against cwd).
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (executable(isAbsolute(dir) ? join(dir, command) : join(resolve(cwd, dir || '.'), command))) return undefined
  }
  return `spawn ${command} ENOENT`
}

function executable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK)
    return true
  } catch {
    return false
  }
}
