/**
 * The CLI entry (bundled to dist/cli.cjs, which bin/actors loads). Commands
 * are registered explicitly so oclif never scans directories at start-up;
 * every command module here is light: heavy views are imported dynamically on
 * the TTY path only.
 */
import {execute} from '@oclif/core'
import Control from './commands/control.js'
import Emit from './commands/emit.js'
import Inspect from './commands/inspect.js'
import Logs from './commands/logs.js'
import MusicPlay from './commands/music/play.js'
import MusicServe from './commands/music/serve.js'
import Prune from './commands/prune.js'
import Recipes from './commands/recipes/index.js'
import RecipesValidate from './commands/recipes/validate.js'
import Run from './commands/run.js'
import Wait from './commands/wait.js'

export const COMMANDS = {
  control: Control,
  emit: Emit,
  inspect: Inspect,
  logs: Logs,
  'music:play': MusicPlay,
  'music:serve': MusicServe,
  prune: Prune,
  recipes: Recipes,
  'recipes:validate': RecipesValidate,
  run: Run,
  wait: Wait,
}

/** Run the CLI with `argv` (without node and script). */
export async function run(argv: string[]): Promise<void> {
  await execute({args: argv, dir: import.meta.url})
}
