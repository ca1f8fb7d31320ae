/**
 * The front end's one output step, shared by both front ends (src/boot/fast.ts
 * and the oclif shells, src/commands/base-command.ts): decide the output mode once
 * (./mode.ts) and show a command's result in it. This is the only place
 * that branches on the mode.
 */
import {decideOutput, type OutputMode} from './mode.js'
import type {CommandResult, TextSinks} from './result.js'
import {writeWhole} from './output-guard.js'
import {printJson, writeNote, writeOut} from './write.js'
import {inertText} from '../../base/platform/text.js'

/** The process's own stdout and stderr; every note is human text, so inert (it may quote a Run's name, error or file). */
export const PROCESS_SINKS: TextSinks = {
  out: writeOut,
  note: (text) => writeNote(inertText(text, {multiline: true})),
  json: printJson,
  jsonText: (text) => writeWhole(text),
}

/** Show `result` in the mode that `--json`, stdout and the environment call for. */
export async function present(result: CommandResult, json: boolean): Promise<void> {
  await show(result, decideOutput({json, isTTY: () => process.stdout.isTTY, env: process.env}))
}

/** Show `result` in `mode` (exported for tests: `to` collects what a document prints). */
export async function show(result: CommandResult, mode: OutputMode, to: TextSinks = PROCESS_SINKS): Promise<void> {
  if (!result) return
  if (result.kind === 'live') {
    const render = mode === 'json' ? result.json : mode === 'ink' && result.ink ? result.ink : result.plain
    await show(await render.call(result), mode, to)
    return
  }
  if (result.notes) to.note(result.notes)
  if (mode === 'json') {
    if (result.printed) to.jsonText(result.printed())
    else if (result.document !== undefined && result.document !== null) to.json(result.document)
  } else if (result.document !== undefined) {
    result.plain?.(result.document, to)
  }
  if (result.exitCode !== undefined) process.exitCode = result.exitCode
}
