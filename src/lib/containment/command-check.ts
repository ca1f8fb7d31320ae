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
  const candidates = command.includes('/')
    ? [isAbsolute(command) ? command : resolve(cwd, command)]
    : (env.PATH ?? '').split(delimiter).map((dir) => join(resolve(cwd, dir || '.'), command))
  for (const candidate of candidates) {
    try {
      accessSync(candidate, constants.X_OK)
      return undefined
    } catch {}
  }
  return `spawn ${command} ENOENT`
}
