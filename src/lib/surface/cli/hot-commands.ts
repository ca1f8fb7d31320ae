/**
 * The commands the fast front end serves (src/boot/fast.ts); every other command goes to oclif.
 * Each gets its own bundle, dist/fast-<name>.cjs (scripts/build.mjs), built from `<name>Command` of src/lib/surface/cli/<name>.ts.
 */
import {controlCommand} from './control.js'
import type {AnyCommandDefinition} from './definition.js'
import {emitCommand} from './emit.js'
import {inspectCommand} from './inspect.js'
import {logsCommand} from './logs.js'
import {runCommand} from './run.js'
import {waitCommand} from './wait.js'

export const HOT_COMMANDS: Record<string, AnyCommandDefinition> = {
  control: controlCommand,
  emit: emitCommand,
  inspect: inspectCommand,
  logs: logsCommand,
  run: runCommand,
  wait: waitCommand,
}
